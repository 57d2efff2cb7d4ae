// SPDX-License-Identifier: MIT
/*
 * --format=pprof decoded with protobuf-c: a gzip member holding a valid profile.proto message
 * (every id and string index resolves), the sample types of each view, values that add up to
 * the trace's own totals (CPU samples, GPU records and their time), labels, mappings with
 * build-ids, and Python frames with file and line. Reads committed traces (samples/traces/).
 * What go tool pprof shows of the function names, after the simplification it applies to
 * names it takes for C++ (reimplemented here from google/pprof: internal/symbolizer's
 * demangling heuristics and internal/graph's ShortenFunctionName), stays whole: Python frames
 * keep function and file, GPU kernels stay apart; and the main binary is the program.
 */
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "trace/trace.h"
#include "unit.h"

#ifdef XPU_HAVE_PPROF
#include <profile.pb-c.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pb_profile;

static const char *trace_dir = "samples/traces";

static pb_profile *report_pprof_path(const char *in, enum report_view view, bool lines,
				     bool host_files)
{
	char path[] = "/tmp/xpu-test-pprof-XXXXXX";
	struct report_opts o = { .format = FMT_PPROF, .view = view, .no_host_files = !host_files,
				 .python_lines = lines, .input = in, .output = path };
	size_t cap = 1 << 20, n = 0;
	uint8_t *raw = NULL, *buf = malloc(cap);
	pb_profile *p = NULL;
	gzFile gz = NULL;
	int fd = mkstemp(path), r;

	if (fd < 0 || !buf)
		goto out;
	close(fd);
	r = report_run(&o);
	CHECK(r == 0, "%s: report_run %d", in, r);
	fd = open(path, O_RDONLY);
	raw = malloc(2);
	CHECK(fd >= 0 && raw && read(fd, raw, 2) == 2 && raw[0] == 0x1f && raw[1] == 0x8b,
	      "%s: a gzip file", in);
	if (fd >= 0)
		close(fd);
	gz = gzopen(path, "rb");
	while (gz && (r = gzread(gz, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
		if (!buf)
			goto out;
	}
	CHECK(gz && r == 0 && n > 0, "%s: gunzip %zu bytes", in, n);
	p = perftools__profiles__profile__unpack(NULL, n, buf);
	CHECK(p, "%s: a profile.proto message", in);
out:
	if (gz)
		gzclose(gz);
	unlink(path);
	free(raw);
	free(buf);
	return p;
}

/* Runs the report into a file and returns the message decoded, or NULL. */
static pb_profile *report_pprof(const char *trace, enum report_view view, bool lines)
{
	char in[256];

	snprintf(in, sizeof(in), "%s/%s", trace_dir, trace);
	return report_pprof_path(in, view, lines, false);
}

static const char *str(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : NULL;
}

/* Every reference resolves; returns the index of sample type TYPE, or -1. */
static int check_refs(const pb_profile *p, const char *type)
{
	size_t i, j, bad = 0;
	int t = -1;

	CHECK(p->n_string_table && !strcmp(p->string_table[0], ""), "string 0 is \"\"");
	for (i = 0; i < p->n_sample_type; i++) {
		bad += !str(p, p->sample_type[i]->type) || !str(p, p->sample_type[i]->unit);
		if (str(p, p->sample_type[i]->type) && !strcmp(str(p, p->sample_type[i]->type), type))
			t = i;
	}
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		bad += s->n_value != p->n_sample_type || !s->n_location_id;
		for (j = 0; j < s->n_location_id; j++)
			bad += !s->location_id[j] || s->location_id[j] > p->n_location;
		for (j = 0; j < s->n_label; j++)
			bad += !str(p, s->label[j]->key) || !str(p, s->label[j]->str);
	}
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		bad += l->id != i + 1 || !l->mapping_id || l->mapping_id > p->n_mapping ||
		       l->n_line != 1 || !l->line[0]->function_id ||
		       l->line[0]->function_id > p->n_function;
	}
	for (i = 0; i < p->n_function; i++)
		bad += p->function[i]->id != i + 1 || !str(p, p->function[i]->name) ||
		       !*str(p, p->function[i]->name) || !str(p, p->function[i]->filename);
	for (i = 0; i < p->n_mapping; i++)
		bad += p->mapping[i]->id != i + 1 || !str(p, p->mapping[i]->filename) ||
		       !str(p, p->mapping[i]->build_id);
	CHECK(bad == 0, "%zu bad references", bad);
	CHECK(t >= 0, "sample type %s", type);
	CHECK(t < 0 || p->default_sample_type == p->sample_type[t]->type,
	      "default sample type %s", type);
	return t;
}

static int64_t sum(const pb_profile *p, int t)
{
	int64_t v = 0;
	size_t i;

	for (i = 0; t >= 0 && i < p->n_sample; i++)
		v += p->sample[i]->value[t];
	return v;
}

static int type_index(const pb_profile *p, const char *type, const char *unit)
{
	size_t i;

	for (i = 0; i < p->n_sample_type; i++) {
		if (!strcmp(str(p, p->sample_type[i]->type), type) &&
		    !strcmp(str(p, p->sample_type[i]->unit), unit))
			return i;
	}
	return -1;
}

/* How many samples carry label key=val (val NULL: any value). */
static size_t with_label(const pb_profile *p, const char *key, const char *val)
{
	size_t i, j, n = 0;

	for (i = 0; i < p->n_sample; i++) {
		for (j = 0; j < p->sample[i]->n_label; j++) {
			const Perftools__Profiles__Label *l = p->sample[i]->label[j];

			if (!strcmp(str(p, l->key), key) && (!val || !strcmp(str(p, l->str), val))) {
				n++;
				break;
			}
		}
	}
	return n;
}

static void test_gpu_view(const struct trace *t)
{
	pb_profile *p = report_pprof("pipeline.xpu", VIEW_GPU, false);
	int64_t gpu_ns = 0;
	size_t i, found = 0;
	int ns;

	if (!p)
		return;
	for (i = 0; i < t->nkernels; i++)
		gpu_ns += t->kernels[i].end_ns - t->kernels[i].start_ns;
	for (i = 0; i < t->nmemcpys; i++)
		gpu_ns += t->memcpys[i].end_ns - t->memcpys[i].start_ns;
	for (i = 0; i < t->nmemsets; i++)
		gpu_ns += t->memsets[i].end_ns - t->memsets[i].start_ns;
	ns = check_refs(p, "gpu");
	CHECK(ns == type_index(p, "gpu", "nanoseconds"), "gpu/nanoseconds");
	CHECK(sum(p, ns) == gpu_ns, "GPU time %lld ns, the trace's %lld",
	      (long long)sum(p, ns), (long long)gpu_ns);
	CHECK(sum(p, type_index(p, "gpu_records", "count")) ==
	      (int64_t)(t->nkernels + t->nmemcpys + t->nmemsets), "GPU records");
	CHECK(p->time_nanos == (int64_t)t->session.start_realtime_ns, "time_nanos");
	CHECK(p->duration_nanos == (int64_t)(t->end.end_mono_ns - t->session.start_mono_ns),
	      "duration_nanos");
	CHECK(with_label(p, "kind", "kernel") && with_label(p, "kind", "memcpy") &&
	      with_label(p, "kind", "memset") && !with_label(p, "kind", "cpu"), "kind labels");
	CHECK(with_label(p, "pid", NULL) == p->n_sample && with_label(p, "comm", NULL) == p->n_sample,
	      "every sample has pid and comm");
	CHECK(with_label(p, "device", "0") == p->n_sample && with_label(p, "tid", NULL) == p->n_sample,
	      "GPU work: device and launching thread");
	for (i = 0; i < p->n_mapping; i++) {
		const char *b = str(p, p->mapping[i]->build_id);

		found += b && strlen(b) == 40 && strspn(b, "0123456789abcdef") == 40;
	}
	CHECK(found > 0, "mappings with a build-id");
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_merged_view(const struct trace *t)
{
	pb_profile *p = report_pprof("pipeline.xpu", VIEW_MERGED, false);
	int cpu, gpu, time, samples;
	size_t i, bad = 0;

	if (!p)
		return;
	time = check_refs(p, "time");
	samples = type_index(p, "samples", "count");
	cpu = type_index(p, "cpu", "nanoseconds");
	gpu = type_index(p, "gpu", "nanoseconds");
	CHECK(samples >= 0 && cpu >= 0 && gpu >= 0, "samples, cpu and gpu types");
	if (samples < 0 || cpu < 0 || gpu < 0 || time < 0)
		goto out;
	CHECK(sum(p, samples) == (int64_t)t->nsamples, "%lld samples, the trace's %zu",
	      (long long)sum(p, samples), t->nsamples);
	for (i = 0; i < p->n_sample; i++) {
		const int64_t *v = p->sample[i]->value;

		bad += v[time] != v[cpu] + v[gpu];
	}
	CHECK(!bad, "time is cpu + gpu in %zu samples", p->n_sample - bad);
	CHECK(p->period == 1000000000ll / t->session.sample_freq_hz &&
	      !strcmp(str(p, p->period_type->type), "cpu"), "period: the sampling period");
	CHECK(with_label(p, "kind", "cpu") && with_label(p, "kind", "kernel"), "cpu and kernel");
	CHECK(with_label(p, "device", NULL) == with_label(p, "kind", "kernel") +
	      with_label(p, "kind", "memcpy") + with_label(p, "kind", "memset"),
	      "a device label on GPU work only");
	CHECK(with_label(p, "tid", NULL) == p->n_sample, "a tid label on every sample");
out:
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_python_lines(void)
{
	pb_profile *p = report_pprof("torch-python.xpu", VIEW_GPU, true);
	size_t i, py = 0, with_line = 0;

	if (!p)
		return;
	check_refs(p, "gpu");
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const Perftools__Profiles__Function *f = p->function[l->line[0]->function_id - 1];
		const char *file = str(p, f->filename);

		if (strcmp(str(p, p->mapping[l->mapping_id - 1]->filename), "[python]"))
			continue;
		py++;
		with_line += strlen(file) > 3 && !strcmp(file + strlen(file) - 3, ".py") &&
			     l->line[0]->line > 0 && strstr(str(p, f->name), file);
	}
	CHECK(py > 10 && with_line == py, "%zu Python frames, %zu with file and line", py, with_line);
	CHECK(with_label(p, "host", NULL) == p->n_sample, "host label");
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* ---- go tool pprof's name simplification (google/pprof: internal/symbolizer, internal/graph) */

/* symbolizer.looksLikeDemangledCPlusPlus (Go's ".<" is a Java "class.<init>") */
static bool looks_like_cpp(const char *s)
{
	if (strstr(s, ".<") || strstr(s, "]).")) /* the second: Go "foo.(*Bar[...]).Method" */
		return false;
	return strpbrk(s, "<>[]") || strstr(s, "::");
}

/* symbolizer.removeMatching: drops each outermost open..close; stops at an unmatched close */
static void remove_matching(char *s, char open, char close)
{
	size_t cur = 0, first = 0;
	int nesting = 0;

	for (; s[cur]; cur++) {
		if (s[cur] == open && ++nesting == 1)
			first = cur;
		if (s[cur] != close)
			continue;
		if (--nesting < 0)
			return;
		if (nesting == 0) {
			memmove(s + first, s + cur + 1, strlen(s + cur + 1) + 1);
			cur = first - 1;	/* wraps to first with cur++, as pprof's */
		}
	}
}

/*
 * What `go tool pprof -top` shows of a Function (default -symbolize), malloc'd: a name that
 * differs from the system_name as it is, else the system_name, simplified if it looks like
 * C++ (demangleSingleFunction; ours are never mangled "_Z" names here).
 */
static char *pprof_top_name(const char *name, const char *system)
{
	char *out;

	if (*name && strcmp(name, system))
		return strdup(name);
	out = strdup(system);
	if (out && looks_like_cpp(out)) {
		remove_matching(out, '(', ')');
		remove_matching(out, '<', '>');
	}
	return out;
}

/* graph.go's regular expressions, in POSIX form (\w is [_[:alnum:]] in the C locale) */
static regex_t re_go, re_java, re_cpp;

static bool compile_pprof_res(void)
{
	return !regcomp(&re_go, "^([-_.[:alnum:]]+/)+(.+)", REG_EXTENDED) &&
	       !regcomp(&re_java, "^([a-z][_[:alnum:]]*\\.)*([A-Z][_$[:alnum:]]*\\.(<init>|"
			"[a-z][_$[:alnum:]]*(\\$[0-9]+)?))(\\(|$)", REG_EXTENDED) &&
	       !regcomp(&re_cpp, "^([_a-zA-Z][_[:alnum:]]*::)+(_*[A-Z][_[:alnum:]]*::~?"
			"[_a-zA-Z][_[:alnum:]]*(<.*>)?)", REG_EXTENDED);
}

/* goVerRegExp, ^(.*?)/v(?:[2-9]|[1-9][0-9]+)([./].*)$ -> $1$2: the first "/vN" goes */
static void drop_go_version(char *s)
{
	char *v;

	for (v = strstr(s, "/v"); v; v = strstr(v + 1, "/v")) {
		size_t d = strspn(v + 2, "0123456789");

		if (d && (v[2 + d] == '.' || v[2 + d] == '/') && v[2] != '0' &&
		    (d > 1 || v[2] >= '2')) {
			memmove(v, v + 2 + d, strlen(v + 2 + d) + 1);
			return;
		}
	}
}

/* graph.ShortenFunctionName: what pprof's graph and flame graph views show */
static void pprof_short_name(char *s)
{
	static const char anon[] = "(anonymous namespace)::";
	regex_t *res[] = { &re_go, &re_java, &re_cpp };
	regmatch_t m[6];
	size_t i;

	if (!strncmp(s, anon, strlen(anon)))
		memmove(s, s + strlen(anon), strlen(s) - strlen(anon) + 1);
	drop_go_version(s);
	for (i = 0; i < 3; i++) {
		if (regexec(res[i], s, 6, m, 0) || m[2].rm_so < 0)
			continue;
		memmove(s, s + m[2].rm_so, m[2].rm_eo - m[2].rm_so);
		s[m[2].rm_eo - m[2].rm_so] = '\0';
		return;
	}
}

static bool blank(const char *s)
{
	return strspn(s, " ") == strlen(s);
}

/* Our look-alikes of <>[] back to ASCII, for comparing with the frame's own file name. */
static void ascii_brackets(char *s)
{
	static const char *const from[] = { "\xe2\x80\xb9", "\xe2\x80\xba", "\xe2\x9f\xa6",
					     "\xe2\x9f\xa7" };
	static const char to[] = "<>[]";
	char *p;
	size_t k;

	for (k = 0; k < 4; k++) {
		while ((p = strstr(s, from[k]))) {
			*p = to[k];
			memmove(p + 1, p + 3, strlen(p + 3) + 1);
		}
	}
}

/* The mapping file name of function index i (through the first location that uses it). */
static const char *function_mapping(const pb_profile *p, size_t i)
{
	size_t l, k;

	for (l = 0; l < p->n_location; l++) {
		for (k = 0; k < p->location[l]->n_line; k++) {
			if (p->location[l]->line[k]->function_id == i + 1)
				return str(p, p->mapping[p->location[l]->mapping_id - 1]->filename);
		}
	}
	return "";
}

/*
 * Every Python and GPU function of one profile: what pprof -top and its graphs show of it is
 * not blank, tells it from every other one, and a Python frame's shows its file.
 */
static void check_names_survive(const char *trace, enum report_view view, bool lines)
{
	pb_profile *p = report_pprof(trace, view, lines);
	size_t i, j, checked = 0, blanks = 0, clashes = 0, fileless = 0;
	char **top, **shown;

	if (!p)
		return;
	top = calloc(p->n_function, sizeof(*top));
	shown = calloc(p->n_function, sizeof(*shown));
	for (i = 0; top && shown && i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		const char *map = function_mapping(p, i), *file = str(p, f->filename);

		if (strcmp(map, "[python]") && strcmp(map, "[gpu]"))
			continue;
		checked++;
		top[i] = pprof_top_name(str(p, f->name), str(p, f->system_name));
		shown[i] = top[i] ? strdup(top[i]) : NULL;
		if (!shown[i])
			break;
		pprof_short_name(shown[i]);
		if (blank(top[i]) || blank(shown[i])) {
			if (blanks++ < 3)
				fprintf(stderr, "  %s: '%s' shows as '%s'\n", trace,
					str(p, f->system_name), top[i]);
			continue;
		}
		for (j = 0; j < i; j++) {
			if (!top[j] || (strcmp(top[i], top[j]) && strcmp(shown[i], shown[j])))
				continue;
			if (clashes++ < 3)
				fprintf(stderr, "  %s: '%.80s' and '%.80s' both show as '%.200s'\n",
					trace, str(p, f->system_name),
					str(p, p->function[j]->system_name), shown[i]);
		}
		ascii_brackets(shown[i]);	/* last: pprof's graphs show the file too */
		fileless += !strcmp(map, "[python]") && *file && !strstr(shown[i], file);
	}
	CHECK(checked > 10, "%s: %zu Python and GPU functions", trace, checked);
	CHECK(!blanks && !clashes && !fileless, "%s: of %zu Python and GPU functions, %zu show "
	      "blank, %zu like another, %zu without their file, in go tool pprof", trace, checked,
	      blanks, clashes, fileless);
	for (i = 0; top && shown && i < p->n_function; i++) {
		free(top[i]);
		free(shown[i]);
	}
	free(top);
	free(shown);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_names_survive_pprof(void)
{
	CHECK(compile_pprof_res(), "pprof's regular expressions compile");
	check_names_survive("torch-python.xpu", VIEW_GPU, false);	/* <module>, kernels */
	check_names_survive("torch-python.xpu", VIEW_GPU, true);	/* file.py:LINE */
	check_names_survive("torch-python.xpu", VIEW_CPU, false);	/* <frozen ...> files */
	check_names_survive("torch-backward.xpu", VIEW_MERGED, false);
	regfree(&re_go);
	regfree(&re_java);
	regfree(&re_cpp);
}

/* pprof's main binary, its first mapping ("File:"), is the traced program, not ld.so. */
static void test_main_binary(const char *trace, const char *exe)
{
	pb_profile *p = report_pprof(trace, VIEW_MERGED, false);
	const char *f, *b;

	if (!p)
		return;
	f = p->n_mapping ? str(p, p->mapping[0]->filename) : "";
	b = strrchr(f, '/');
	CHECK(!strcmp(b ? b + 1 : f, exe), "%s: main binary %s, not %s", trace, f, exe);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/*
 * The golden synthetic trace (tests/golden/run.sh builds it and passes it here): its stacks
 * point at the function starts of tests/golden/target.c, built with -g, so each native
 * location has its address (a file offset) and the line of the function's opening brace.
 */
static void test_lines(const char *synthetic)
{
	static const struct { const char *fn; int64_t line; } want[] = {
		{ "leaf_work", 4 }, { "middle", 9 }, { "app::Solver::step(int)", 16 }, { "main", 21 },
	};
	pb_profile *p = report_pprof_path(synthetic, VIEW_CPU, false, true);	/* its target */
	size_t i, k, found = 0;

	if (!p)
		return;
	check_refs(p, "samples");
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		for (i = 0; i < p->n_location; i++) {
			const Perftools__Profiles__Location *l = p->location[i];
			const Perftools__Profiles__Function *f = p->function[l->line[0]->function_id - 1];
			const char *file = str(p, f->filename);

			if (strcmp(str(p, f->name), want[k].fn))
				continue;
			CHECK(l->line[0]->line == want[k].line && l->address &&
			      strlen(file) > 8 && !strcmp(file + strlen(file) - 8, "target.c") &&
			      p->mapping[l->mapping_id - 1]->has_line_numbers,
			      "%s at %s:%lld, address 0x%llx", want[k].fn, file,
			      (long long)l->line[0]->line, (unsigned long long)l->address);
			found++;
			break;
		}
	}
	CHECK(found == sizeof(want) / sizeof(want[0]), "%zu of the target's functions", found);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

int main(int argc, char **argv)
{
	struct trace t;
	char err[256], path[256];

	if (argc > 1) {
		test_lines(argv[1]);
		return unit_finish();
	}

	snprintf(path, sizeof(path), "%s/pipeline.xpu", trace_dir);
	if (trace__load(&t, path, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	test_gpu_view(&t);
	test_merged_view(&t);
	test_python_lines();
	test_names_survive_pprof();
	test_main_binary("pipeline.xpu", "cuda_pipeline");
	test_main_binary("torch-python.xpu", "python3.12");
	trace__free(&t);
	return unit_finish();
}

#else

int main(int argc, char **argv)
{
	printf("skip: xpu-report was built without protobuf-c (no --format=pprof)\n");
	return 77;
}

#endif
