/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What kmemsnoop takes from a machine by default, whatever its size: the
 * rules that keep what grows with the number of CPUs within bounds.
 */
#ifndef KMEMSNOOP_BUDGET_H
#define KMEMSNOOP_BUDGET_H

#include <stdint.h>

/* The ring buffer of one CPU: this much while all the rings fit in
 * BUDGET_RINGS_TOTAL, else the largest power of two that does (and never
 * below BUDGET_RING_MIN, -b's smallest size).  16M rather than 8M: with
 * both CPUs of a 2-CPU machine allocating (up to 1.9 M events/s), the live
 * stream lost a burst in 5 runs of 40 at 8M and in 3 of 80 at 16M, the
 * text in none of those (bench/busytext.sh): the reader shares those CPUs,
 * and the rings carry it over its slow stretches. */
#define BUDGET_RING_PER_CPU (16ULL << 20)
#define BUDGET_RINGS_TOTAL (256ULL << 20)
#define BUDGET_RING_MIN (64ULL << 10)

/* The default ring size of each of ncpus CPUs (-b not given). */
uint64_t budget_ring_size(int ncpus);

/* The stdio buffer of each -o cpu file: this much while all of them fit
 * in BUDGET_FILE_BUFFERS_TOTAL, else halved until they do (never below
 * BUDGET_FILE_BUFFER_MIN).  Big buffers: one write(2) per megabyte instead
 * of per block, on the CPU that competes with the traced load. */
#define BUDGET_FILE_BUFFER (1ULL << 20)
#define BUDGET_FILE_BUFFERS_TOTAL (64ULL << 20)
#define BUDGET_FILE_BUFFER_MIN (64ULL << 10)

/* The -o file buffer of each of ncpus CPUs. */
uint64_t budget_file_buffer(int ncpus);

/* File descriptors kmemsnoop may hold at once on ncpus CPUs: one ring and
 * one -o file per CPU, and the BPF object's programs, maps and links. */
uint64_t budget_open_files(int ncpus);

#endif
