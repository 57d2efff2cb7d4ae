// SPDX-License-Identifier: MIT
/* `--format=info`: what is in the file and how complete it is, without symbolizing stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpu_stats.h"
#include "profile.h"

static const char *end_name(enum trace_reader_end e)
{
	switch (e) {
	case TRACE_END_CLEAN: return "clean (trailer present)";
	case TRACE_END_NO_TRAILER: return "no trailer (recorder did not finish)";
	case TRACE_END_TRUNCATED: return "truncated";
	case TRACE_END_CORRUPT: return "corrupt";
	default: return "unknown";
	}
}

static const char *reason_name(uint32_t r)
{
	switch (r) {
	case XPU_END_TARGET_EXITED: return "target exited";
	case XPU_END_SIGNAL: return "signal";
	case XPU_END_ERROR: return "error";
	case XPU_END_DURATION: return "duration reached";
	default: return "unknown";
	}
}

static const char *lost_name(uint32_t s)
{
	switch (s) {
	case XPU_LOST_RINGBUF: return "ringbuf";
	case XPU_LOST_CUPTI_RECORDS: return "cupti-records";
	case XPU_LOST_CUPTI_TRANSPORT: return "cupti-transport";
	case XPU_LOST_STACK: return "stack";
	case XPU_LOST_MAPPINGS: return "mappings";
	case XPU_LOST_WRITER: return "writer";
	case XPU_LOST_PY_STACK: return "python-frames";
	default: return "other";
	}
}

static const char *stat_name(uint32_t id)
{
	static const char *const n[] = {
		[XPU_STAT_SAMPLES] = "samples",
		[XPU_STAT_RINGBUF_LOST] = "ringbuf_lost",
		[XPU_STAT_STACK_ERRORS] = "stack_errors",
		[XPU_STAT_TASK_EVENTS] = "task_events",
		[XPU_STAT_MAPPING_SCANS] = "mapping_scans",
		[XPU_STAT_MAPPING_SCAN_FAILURES] = "mapping_scan_failures",
		[XPU_STAT_GPU_RECORDS] = "gpu_records",
		[XPU_STAT_GPU_LAUNCHES] = "gpu_launches",
		[XPU_STAT_CUPTI_DROPPED] = "cupti_dropped",
		[XPU_STAT_WRITER_BYTES_RAW] = "writer_bytes_raw",
		[XPU_STAT_WRITER_BYTES_COMPRESSED] = "writer_bytes_compressed",
		[XPU_STAT_CUPTI_CLIENTS] = "cupti_clients",
		[XPU_STAT_CUPTI_REJECTED] = "cupti_rejected",
		[XPU_STAT_STACK_COPIES] = "stack_copies",
		[XPU_STAT_STACK_COPY_ERRORS] = "stack_copy_errors",
		[XPU_STAT_STACK_TOP_ERRORS] = "stack_top_errors",
		[XPU_STAT_PY_STACKS] = "py_stacks",
		[XPU_STAT_PY_FRAMES] = "py_frames",
		[XPU_STAT_PY_TRUNCATED] = "py_truncated",
		[XPU_STAT_PY_READ_ERRORS] = "py_read_errors",
		[XPU_STAT_PY_CODES] = "py_codes",
		[XPU_STAT_PY_CODE_ERRORS] = "py_code_errors",
		[XPU_STAT_PY_NO_THREAD] = "py_no_thread",
		[XPU_STAT_CFI_WALKS] = "cfi_walks",
		[XPU_STAT_CFI_FRAMES] = "cfi_frames",
		[XPU_STAT_CFI_END_OUTERMOST] = "cfi_end_outermost",
		[XPU_STAT_CFI_END_FP] = "cfi_end_fp",
		[XPU_STAT_CFI_END_READ] = "cfi_end_unreadable",
		[XPU_STAT_CFI_END_LIMIT] = "cfi_end_frame_limit",
		[XPU_STAT_CFI_END_BAD_SP] = "cfi_end_bad_sp",
		[XPU_STAT_CFI_FP_NO_MAP] = "cfi_fp_no_mapping",
		[XPU_STAT_CFI_FP_NO_TABLE] = "cfi_fp_table_not_loaded",
		[XPU_STAT_CFI_FP_NO_ROW] = "cfi_fp_no_fde",
		[XPU_STAT_CFI_FP_UNSUPPORTED] = "cfi_fp_unsupported_rule",
		[XPU_STAT_CFI_NO_PROC] = "cfi_walks_without_tables",
		[XPU_STAT_CFI_FILES] = "cfi_files",
		[XPU_STAT_CFI_FILES_FAILED] = "cfi_files_failed",
		[XPU_STAT_CFI_FILES_OVER_BUDGET] = "cfi_files_over_budget",
		[XPU_STAT_CFI_ROWS] = "cfi_rows",
		[XPU_STAT_CFI_TABLE_BYTES] = "cfi_table_bytes",
		[XPU_STAT_CFI_BUILD_NS] = "cfi_build_ns",
		[XPU_STAT_CFI_BUILD_MAX_NS] = "cfi_build_max_ns",
		[XPU_STAT_CFI_FILES_SHARED] = "cfi_files_shared",
		[XPU_STAT_CFI_START_WAIT_NS] = "cfi_start_wait_ns",
		[XPU_STAT_CFI_START_WAIT_TIMEOUTS] = "cfi_start_wait_timeouts",
	};

	return id < sizeof(n) / sizeof(n[0]) && n[id] ? n[id] : "unknown";
}

/* Prints a string field; NUL-separated lists (argv) are joined with spaces. */
static void print_str(struct trace *t, FILE *out, const char *label, uint32_t id)
{
	const uint32_t *v = id ? kmap__get(&t->string_ids, id, 0) : NULL;
	uint32_t i, len;
	const char *s;

	fprintf(out, "  %-16s ", label);
	if (!v) {
		fprintf(out, "%s\n", id ? "(unknown string)" : "-");
		if (id)
			t->bad_string_refs++;
		return;
	}
	s = t->strings[*v].s;
	len = t->strings[*v].len;
	while (len && s[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		fputc(c == '\0' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : c, out);
	}
	fputc('\n', out);
}

int out_info(struct profile *p, FILE *out)
{
	struct trace *t = p->t;
	const struct xpu_rec_session *s = &t->session;
	size_t i;
	int type;

	fprintf(out, "file\n");
	fprintf(out, "  %-16s %u.%u\n", "format", t->hdr.major, t->hdr.minor);
	fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 " bytes valid\n", "size",
		t->st.bytes_valid, t->st.file_bytes);
	fprintf(out, "  %-16s %" PRIu64 "\n", "frames", t->st.frames_ok);
	fprintf(out, "  %-16s %" PRIu64 "\n", "records", t->st.records);
	fprintf(out, "  %-16s %s\n", "end", end_name(t->st.end));
	if (t->st.end != TRACE_END_CLEAN && t->st.reason[0])
		fprintf(out, "  %-16s %s\n", "reason", t->st.reason);

	fprintf(out, "session\n");
	if (!t->has_session) {
		fprintf(out, "  (no session record)\n");
	} else {
		print_str(t, out, "host", s->host_str);
		print_str(t, out, "kernel", s->kernel_str);
		print_str(t, out, "arch", s->arch_str);
		print_str(t, out, "recorder", s->version_str);
		print_str(t, out, "command", s->cmdline_str);
		print_str(t, out, "options", s->options_str);
		fprintf(out, "  %-16s %u\n", "cpus", s->ncpu);
		fprintf(out, "  %-16s %u Hz\n", "frequency", s->sample_freq_hz);
		fprintf(out, "  %-16s %s\n", "stacks",
			s->stack_mode == XPU_STACK_DWARF ? "dwarf" :
			s->stack_mode == XPU_STACK_CFI ? "cfi (unwound in BPF)" :
			s->stack_mode == XPU_STACK_FP ? "frame pointer" : "unknown");
		fprintf(out, "  %-16s %s%s%s\n", "flags",
			s->flags & XPU_SESSION_KERNEL_STACKS ? "kernel-stacks " : "",
			s->flags & XPU_SESSION_ATTACHED ? "attached " : "",
			s->flags & XPU_SESSION_GPU ? "gpu" : "");
		fprintf(out, "  %-16s %u\n", "target pid", s->target_pid);
		fprintf(out, "  %-16s %" PRIu64 " ns (monotonic)\n", "start", s->start_mono_ns);
	}
	if (t->has_end) {
		fprintf(out, "  %-16s %" PRIu64 " ns (monotonic)\n", "end", t->end.end_mono_ns);
		if (t->has_session && t->end.end_mono_ns >= s->start_mono_ns)
			fprintf(out, "  %-16s %.3f s\n", "duration",
				(t->end.end_mono_ns - s->start_mono_ns) / 1e9);
		fprintf(out, "  %-16s %s\n", "end reason", reason_name(t->end.reason));
		fprintf(out, "  %-16s %d\n", "exit code", t->end.exit_code);
		if (t->end.term_signal)
			fprintf(out, "  %-16s %d\n", "signal", t->end.term_signal);
	} else {
		fprintf(out, "  %-16s (no session end record)\n", "end");
	}

	fprintf(out, "clock sync\n");
	for (i = 0; i < t->nclocks; i++)
		fprintf(out, "  mono %" PRIu64 " realtime %" PRIu64 " boottime %" PRIu64
			" +-%" PRIu64 " ns\n", t->clocks[i].mono_ns, t->clocks[i].realtime_ns,
			t->clocks[i].boottime_ns, t->clocks[i].uncertainty_ns);
	if (!t->nclocks)
		fprintf(out, "  (none)\n");

	fprintf(out, "records\n");
	for (type = 1; type <= XPU_REC_TYPE_MAX_KNOWN; type++) {
		if (t->type_counts[type])
			fprintf(out, "  %-16s %" PRIu64 "\n", xpu_record_type_name(type),
				t->type_counts[type]);
	}
	fprintf(out, "  %-16s %" PRIu64 "\n", "unknown types", t->unknown_types);

	fprintf(out, "integrity\n");
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad records", t->bad_records);
	fprintf(out, "  %-16s %" PRIu64 "\n", "duplicate ids", t->dup_ids);
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad string refs", t->bad_string_refs);
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad stack refs", t->bad_stack_refs);
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad dso refs", t->bad_dso_refs);
	if (t->ksyms_out_of_order)
		fprintf(out, "  %-16s %" PRIu64 "\n", "ksyms gaps", t->ksyms_out_of_order);

	fprintf(out, "lost\n");
	for (i = 0; i < t->nlost; i++)
		fprintf(out, "  %-16s %" PRIu64 " (pid %u, at %" PRIu64 " ns)\n",
			lost_name(t->lost[i].source), t->lost[i].count, t->lost[i].pid,
			t->lost[i].ts_ns);
	if (!t->nlost)
		fprintf(out, "  (none)\n");
	if (gpu_stats__print_procs(t, out))
		return -ENOMEM;

	fprintf(out, "stats\n");
	for (i = 0; i < t->nstats; i++)
		fprintf(out, "  %-24s %" PRIu64 "\n", stat_name(t->stats[i].id), t->stats[i].value);
	if (!t->nstats)
		fprintf(out, "  (none)\n");

	{
		uint64_t cc, ct, gc, gt;
		const char *hint;

		if (unwind__complete_rate(p, &cc, &ct, &gc, &gt))
			return -ENOMEM;
		fprintf(out, "stacks\n");
		fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 " cpu samples (%.1f%%), %" PRIu64
			" of %" PRIu64 " gpu launches (%.1f%%)\n", "complete", cc, ct,
			ct ? 100.0 * cc / ct : 0.0, gc, gt, gt ? 100.0 * gc / gt : 0.0);
		if (p->uw.copies)
			fprintf(out, "  %-16s %" PRIu64 " copies (%.0f bytes each), %" PRIu64
				" matched, %" PRIu64 " unwound (%.1f frames each), %" PRIu64
				" kept frame pointers\n", "dwarf", p->uw.copies,
				(double)p->uw.copy_bytes / p->uw.copies, p->uw.matched, p->uw.used,
				p->uw.used ? (double)p->uw.frames / p->uw.used : 0.0, p->uw.failed);
		if (p->uw.top_bytes)
			fprintf(out, "  %-16s %.0f bytes below the stack top per copy\n", "dwarf top",
				(double)p->uw.top_bytes / p->uw.copies);
		if (p->uw.used && unwind__print_stops(p, out, 12))
			return -ENOMEM;
		hint = unwind__hint(p, cc + gc, ct + gt);
		if (hint)
			fprintf(out, "  %-16s %s\n", "hint", hint);
	}
	if (t->npy_runtimes) {
		fprintf(out, "python\n");
		pyframes__print_runtimes(t, out, "  ");
		fprintf(out, "  %-16s %" PRIu64 " cpu samples, %" PRIu64 " gpu launches\n",
			"with frames", p->py.samples, p->py.launches);
		fprintf(out, "  %-16s %" PRIu64 " evaluator frames replaced, %" PRIu64
			" frame groups above a native stack that ended early\n", "spliced",
			p->py.activations, p->py.outer_groups);
	}

	fprintf(out, "dsos\n");
	for (i = 0; i < t->ndsos; i++) {
		const struct tr_dso *d = &t->dsos[i];
		char hex[2 * XPU_BUILD_ID_MAX + 1] = "-";
		int k;

		for (k = 0; k < d->rec.build_id_len; k++)
			sprintf(hex + 2 * k, "%02x", d->rec.build_id[k]);
		fprintf(out, "  %s %s local: %s\n", hex, d->path[0] ? d->path : "(unknown path)",
			symbolizer__dso_status(&p->sym, i));
	}
	if (!t->ndsos)
		fprintf(out, "  (none)\n");
	return ferror(out) ? -EIO : 0;
}
