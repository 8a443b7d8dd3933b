/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-reader.c: libFuzzer harness for the pmclog reader.
 *
 * IMPLEMENTATION NOTES
 *   Beyond "no crash, no sanitizer report", three properties abort on failure:
 *   1. The input fed whole and fed in pieces (sizes taken from the input's first
 *      byte) yields the same records, status, error and offsets.
 *   2. Every record's raw bytes are the input at its offset (the reader reads
 *      nothing else).
 *   3. Encoding a decoded record (when the encoder accepts it) and decoding that
 *      again gives a record that encodes to the same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/pmclog.h"

struct summary {
	uint64_t n;
	uint64_t hash;
	enum plog_status status;
	enum plog_error_kind kind;
	uint64_t err_offset, end_offset, trailing;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void check_reencode(const struct plog_record *rec)
{
	static uint8_t a[PLOG_RECORD_MAX], b[PLOG_RECORD_MAX];
	struct plog_reader *r;
	struct plog_record again;
	int la, lb;

	la = plog_encode(rec, a);
	if (la < 0)
		return;
	if (plog_reader__new(0, &r) < 0)
		abort();
	if (plog_reader__feed(r, a, (size_t)la) < 0 || plog_reader__next(r, &again) != 1)
		abort();
	lb = plog_encode(&again, b);
	if (lb != la || memcmp(a, b, (size_t)la) != 0)
		abort();
	plog_reader__free(r);
}

static void run(const uint8_t *d, size_t n, size_t chunk, struct summary *s, int deep)
{
	struct plog_reader *r;
	struct plog_record rec;
	size_t pos = 0;
	int k = 0;

	memset(s, 0, sizeof(*s));
	s->hash = 14695981039346656037ull;
	if (plog_reader__new(0, &r) < 0)
		abort();
	for (;;) {
		while ((k = plog_reader__next(r, &rec)) > 0) {
			if (rec.offset + rec.length > n || memcmp(rec.raw, d + rec.offset, rec.length))
				abort();
			s->n++;
			s->hash = mix(s->hash, &rec.offset, sizeof(rec.offset));
			s->hash = mix(s->hash, rec.raw, rec.length);
			if (deep)
				check_reencode(&rec);
		}
		/* Keep feeding after an error: the reader must count those bytes too. */
		if (pos == n)
			break;
		size_t c = n - pos < chunk ? n - pos : chunk;

		if (plog_reader__feed(r, d + pos, c) < 0)
			abort();
		pos += c;
	}
	plog_reader__finish(r);
	while (k >= 0 && (k = plog_reader__next(r, &rec)) > 0)
		abort(); /* everything decodable was decoded before finish */
	s->status = plog_reader__status(r);
	if (s->status == PLOG_STATUS_ERROR) {
		s->kind = plog_reader__error(r)->kind;
		s->err_offset = plog_reader__error(r)->offset;
	}
	s->end_offset = plog_reader__offset(r);
	s->trailing = plog_reader__trailing(r);
	plog_reader__free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct summary whole, pieces;
	size_t chunk = size ? (size_t)(data[0] % 37) + 1 : 1;

	run(data, size, size ? size : 1, &whole, 1);
	run(data, size, chunk, &pieces, 0);
	if (memcmp(&whole, &pieces, sizeof(whole)) != 0) {
		fprintf(stderr, "whole and chunked (%zu) reads differ\n", chunk);
		abort();
	}
	return 0;
}
