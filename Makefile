# xpu-perf build. Outputs in build/ (build-san/ with SAN=1). V=1 prints commands.
# CUDA is optional: without nvcc/CUPTI headers everything but the injection library builds.

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build-san
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow \
	     -fno-sanitize-recover=undefined,float-cast-overflow
else
BUILD ?= build
SAN_FLAGS :=
endif

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wundef
CFLAGS ?= -O2 -g
CFLAGS += $(WARN) -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE $(SAN_FLAGS) \
	  -DXPU_VERSION='"$(VERSION)"' -Icommon -I$(BUILD)
LDFLAGS += $(SAN_FLAGS)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:

COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
# report/ is layered (docs/layout.md), a layer may keep parts in folders (output/chrome/);
# every part but main() is the report library
REPORT_SRC := $(wildcard report/*/*.c report/*/*/*.c)
REPORT_OBJ := $(REPORT_SRC:%.c=$(BUILD)/%.o)
REPORT_MAIN := report/cmd/main.c
REPORT_LIB_SRC := $(filter-out $(REPORT_MAIN),$(REPORT_SRC))
REPORT_LIBS := -ldw -lelf -lzstd -lm
# the system C++ demangler (libiberty-dev); without it frame names stay mangled
HAVE_LIBIBERTY := $(shell printf '\043include <libiberty/demangle.h>\nint main(void) { return \
	!cplus_demangle_v3_callback("_Z1fv", 0, 0, 0); }\n' | \
	$(CC) -x c - -o /dev/null -liberty 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBIBERTY),1)
REPORT_LIBS += -liberty
REPORT_DEFS := -DXPU_HAVE_LIBIBERTY
endif
# --format=pprof: protobuf-c (libprotobuf-c-dev, protobuf-c-compiler) generates the C code of
# Google's profile.proto, as Debian's golang-github-google-pprof-dev installs it, into
# $(BUILD)/gen/ at build time; zlib gzips it. Without them --format=pprof says what is missing.
PROTOC_C ?= protoc-c
PROFILE_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
HAVE_PPROF := $(shell command -v $(PROTOC_C) >/dev/null && test -f $(PROFILE_PROTO) && \
	printf '\043include <protobuf-c/protobuf-c.h>\n\043include <zlib.h>\nint main(void) { \
	return !protobuf_c_version() || !zlibVersion(); }\n' | \
	$(CC) -x c - -o /dev/null -lprotobuf-c -lz 2>/dev/null && echo 1)
ifeq ($(HAVE_PPROF),1)
REPORT_LIBS += -lprotobuf-c -lz
REPORT_DEFS += -DXPU_HAVE_PPROF
PPROF_GEN_SRC := gen/profile.pb-c.c
endif
# --format=perfetto compresses its packets with zlib where it is there (report/output/perfetto/compress.c)
HAVE_ZLIB := $(shell printf '\043include <zlib.h>\nint main(void) { return !zlibVersion(); }\n' | \
	$(CC) -x c - -o /dev/null -lz 2>/dev/null && echo 1)
ifeq ($(HAVE_ZLIB),1)
REPORT_DEFS += -DXPU_HAVE_ZLIB
ifneq ($(HAVE_PPROF),1)
REPORT_LIBS += -lz
endif
endif
RECORD_SRC := $(wildcard record/*.c record/*/*.c)
RECORD_OBJ := $(RECORD_SRC:%.c=$(BUILD)/%.o)
RECORD_MAIN := record/main.c
RECORD_LIBS := -lbpf -lelf -lzstd -lpthread
BPF_SRC := $(wildcard bpf/*.bpf.c)
BPF_OBJ := $(BPF_SRC:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
BPF_SKEL := $(BPF_SRC:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
CUPTI_SRC := $(wildcard cupti/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SAMPLE_SRC := $(wildcard samples/*.c)

HAVE_CUDA := $(shell test -x $(NVCC) -a -f $(CUDA_HOME)/include/cupti.h && echo 1)

TARGETS := $(BUILD)/xpu-report $(BUILD)/xpu-record $(BUILD)/libxpucommon.a $(BUILD)/libxpureport.a \
	   $(BUILD)/libxpurecord.a
ifeq ($(HAVE_CUDA),1)
ifneq ($(CUPTI_SRC),)
TARGETS += $(BUILD)/libxpu-cupti.so
endif
endif

all: $(TARGETS) samples bench

# ---- benchmark programs (fixed work; see bench/) -------------------------------------------------
bench: $(BUILD)/bench/workload $(BUILD)/bench/marker_bench $(BUILD)/bench/gen_trace \
	$(BUILD)/bench/cfi_tables $(BUILD)/bench/pingpong $(BUILD)/bench/deep_chain \
	$(BUILD)/bench/deep_chain_fp
$(BUILD)/bench/workload: bench/workload.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $<
# context switches for bench/offcpu_overhead.py
$(BUILD)/bench/pingpong: bench/pingpong.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -pthread -o $@ $<
$(BUILD)/bench/marker_bench: bench/marker_bench.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $< -ldl
# deep stacks without frame pointers, for bench/cfi_prog_cost.py
$(BUILD)/bench/deep_chain: bench/deep_chain.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -o $@ $<
$(BUILD)/bench/deep_chain_fp: bench/deep_chain.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o $@ $<
# -g cfi table build time per file, for bench/cfi_tables.py (record's builder, no BPF)
$(BUILD)/bench/cfi_tables: bench/cfi_tables.c record/cfi/cfi_build.c record/cfi/cfi_build.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Irecord/cfi -Irecord -Ibpf -o $@ bench/cfi_tables.c record/cfi/cfi_build.c $(LDFLAGS) -lelf
# writes a large synthetic trace for bench/report_speed.py
$(BUILD)/bench/gen_trace: bench/gen_trace.c $(BUILD)/libxpucommon.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) -lzstd

# ---- common --------------------------------------------------------------------------------
$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libxpucommon.a: $(COMMON_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- report: libelf, libdw, zstd and libc only ---------------------------------------------
$(REPORT_OBJ): CFLAGS += -Ireport $(REPORT_DEFS)

# profile.proto's C code, generated (never in git); out_pprof.c includes it from gen/
%/gen/profile.pb-c.c %/gen/profile.pb-c.h: $(PROFILE_PROTO)
	$(call msg,PROTOC,$*/gen/profile.pb-c.c)
	$(Q)mkdir -p $*/gen
	$(Q)$(PROTOC_C) -I$(dir $(PROFILE_PROTO)) --c_out=$*/gen $(PROFILE_PROTO)
$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BUILD)/gen -c $< -o $@
ifeq ($(HAVE_PPROF),1)
$(BUILD)/report/output/out_pprof.o: $(BUILD)/gen/profile.pb-c.h
$(BUILD)/report/output/out_pprof.o: CFLAGS += -I$(BUILD)/gen
endif

$(BUILD)/libxpureport.a: $(REPORT_LIB_SRC:%.c=$(BUILD)/%.o) $(PPROF_GEN_SRC:%.c=$(BUILD)/%.o)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/xpu-report: $(REPORT_MAIN:%.c=$(BUILD)/%.o) $(BUILD)/libxpureport.a $(BUILD)/libxpucommon.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(REPORT_LIBS)

# ---- BPF and record ------------------------------------------------------------------------
# BPF_DEFS: -D overrides of constants the BPF source lets a build set (tests/gpu/bundle_variant.sh)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ibpf -Ibpf/vmlinux/$(ARCH) -Icommon \
	$(BPF_DEFS)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)llvm-strip -g $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# the objects that include a BPF skeleton
$(BUILD)/record/bpf_setup.o $(BUILD)/record/driver_trace.o: $(BPF_SKEL)
$(RECORD_OBJ): CFLAGS += -Irecord -Ibpf -I$(BUILD)/bpf

# every part of record/ but main() is the record library, which the record unit tests link
$(BUILD)/libxpurecord.a: $(filter-out $(BUILD)/$(RECORD_MAIN:.c=.o),$(RECORD_OBJ))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/xpu-record: $(BUILD)/$(RECORD_MAIN:.c=.o) $(BUILD)/libxpurecord.a $(BUILD)/libxpucommon.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(RECORD_LIBS)

# ---- CUPTI injection library (CUDA optional) -------------------------------------------------
CUPTI_CFLAGS := -I$(CUDA_HOME)/include -Ibpf -fPIC -fvisibility=hidden
# the in-process walk includes the BPF walkers, which read 8-byte words at any offset of their
# windows (see WALKER_SRC): UBSan's alignment check would stop every walk
$(BUILD)/cupti/inproc_walk.o: CUPTI_CFLAGS += -fno-sanitize=alignment
$(BUILD)/cupti/%.o: cupti/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CUPTI_CFLAGS) -MMD -MP -c $< -o $@

# Loaded into every CUDA process of the traced tree: libc only (no zstd, no libelf), so it
# links none of common/*.c; it shares only headers (xpu_format.h, cupti_wire.h).
$(BUILD)/libxpu-cupti.so: $(CUPTI_SRC:%.c=$(BUILD)/%.o)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -shared -o $@ $^ -ldl -lpthread -Wl,--no-undefined

# ---- samples ---------------------------------------------------------------------------------
-include samples/samples.mk
ifeq ($(HAVE_CUDA),1)
-include samples/cuda.mk
bench: $(BUILD)/bench/launch_bench
$(BUILD)/bench/launch_bench: bench/gpu/launch_bench.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_FLAGS) -o $@ $<
endif

# ---- tests -----------------------------------------------------------------------------------
# Record unit tests link the record library (they never include a .c file of record/); those
# of code without libbpf pull in no BPF object.
RECORD_TESTS := test_jit_parse test_cfi_build test_elf_deps test_autograd_syms test_tls_ref \
	test_remote_call test_cupti_rx test_proc_table test_writer_stats test_writer_level test_inproc_share test_inproc_events test_cfi_cache \
	test_stat_sink test_parts test_kernel_mmaps
RECORD_TEST_LIBS := $(BUILD)/libxpurecord.a $(BUILD)/libxpucommon.a
$(RECORD_TESTS:%=$(BUILD)/tests/%): $(BUILD)/tests/%: tests/unit/%.c $(RECORD_TEST_LIBS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Irecord -Ibpf -o $@ $< $(RECORD_TEST_LIBS) $(LDFLAGS) \
		$(RECORD_LIBS) -ldw -ldl
# pieces of the injection library tested alone, with stand-ins for the rest
$(BUILD)/tests/test_event_ring: tests/unit/test_event_ring.c cupti/event_ring.c cupti/event_ring.h
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Icupti -Ibpf -o $@ $< cupti/event_ring.c $(LDFLAGS) -lpthread
$(BUILD)/tests/test_cupti_share: tests/unit/test_cupti_share.c cupti/transport.c cupti/event_ring.c \
		cupti/xpu_cupti.h cupti/event_ring.h cupti/inproc_walk.h common/walk_share.h
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(CUDA_HOME)/include -Ibpf -Itests/unit -Icupti -o $@ $< cupti/transport.c \
		cupti/event_ring.c $(LDFLAGS) -lpthread
ifeq ($(wildcard $(CUDA_HOME)/include/cupti.h),)
UNIT_BIN := $(filter-out $(BUILD)/tests/test_cupti_share,$(UNIT_BIN))
endif
# the node counter's thread-local, located in stand-ins built with each TLS model
SEQ_FIXTURES := $(addprefix $(BUILD)/tests/fixtures/seq_counter_,ld.so gd.so desc.so)
$(BUILD)/tests/fixtures/seq_counter_ld.so: TLS_FLAGS := -ftls-model=local-dynamic
$(BUILD)/tests/fixtures/seq_counter_gd.so: TLS_FLAGS := -DSEQ_EXPORTED
$(BUILD)/tests/fixtures/seq_counter_desc.so: TLS_FLAGS := -mtls-dialect=gnu2
$(SEQ_FIXTURES): tests/unit/fixtures/seq_counter.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -fPIC -shared $(TLS_FLAGS) -o $@ $<
$(BUILD)/tests/test_tls_ref: $(SEQ_FIXTURES)
# calls into a live process over ptrace: a target with threads to check, a library to load
REMOTE_FIXTURES := $(addprefix $(BUILD)/tests/fixtures/,remote_call_target remote_call_lib.so)
$(BUILD)/tests/fixtures/remote_call_target: tests/unit/remote_call_target.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g $(WARN) -std=gnu11 -D_GNU_SOURCE -rdynamic -pthread -o $@ $<
$(BUILD)/tests/fixtures/remote_call_lib.so: tests/unit/remote_call_lib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g $(WARN) -std=gnu11 -fPIC -shared -o $@ $<
$(BUILD)/tests/test_remote_call $(BUILD)/tests/test_proc_table: $(REMOTE_FIXTURES)
$(BUILD)/tests/test_tls_ref $(BUILD)/tests/test_remote_call $(BUILD)/tests/test_proc_table: \
	CFLAGS += -DFIXTURE_DIR='"$(abspath $(BUILD))/tests/fixtures"'
# the BPF stack walkers as user code, checked against libdw on snapshots of real processes
# (tests/walker/): tests/e2e/dwarf's chain, a library and a program, without frame pointers and
# with them
WALKER_FIX := $(BUILD)/tests/fixtures/walker
WALKER_FIXTURES := $(WALKER_FIX)/walker_chain $(WALKER_FIX)/walker_chain_fp
$(WALKER_FIX)/walker_chain: WALKER_FP := -fomit-frame-pointer
$(WALKER_FIX)/walker_chain_fp: WALKER_FP := -fno-omit-frame-pointer
$(WALKER_FIXTURES): tests/e2e/dwarf/chain_main.c tests/e2e/dwarf/chain_lib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 $(WALKER_FP) -fno-optimize-sibling-calls -fPIC -shared \
		-o $(@D)/lib$(@F).so tests/e2e/dwarf/chain_lib.c
	$(Q)$(CC) -O2 $(WALKER_FP) -fno-optimize-sibling-calls -o $@ tests/e2e/dwarf/chain_main.c \
		-L$(@D) -l$(@F) -Wl,-rpath,'$$ORIGIN'
# -fno-sanitize=alignment: the walkers read 8-byte words at any offset of their windows (the
# CFI window starts 4 bytes past an 8-byte boundary in struct cfi_scratch), which BPF on x86-64
# allows; UBSan would stop every walk at its first read.
WALKER_SRC := tests/walker/test_walker.c tests/walker/walker_host.c tests/walker/snapshot.c \
	tests/walker/capture.c
$(BUILD)/tests/test_walker: $(WALKER_SRC) $(wildcard tests/walker/*.h) bpf/user_shim.h bpf/cfi_walk.bpf.h \
		bpf/py_walk.bpf.h bpf/xpu_bpf_abi.h $(WALKER_FIXTURES) $(RECORD_TEST_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Itests/walker -Irecord -Ibpf \
		-DFIXTURE_DIR='"$(abspath $(WALKER_FIX))"' -DWALKER_SRC_DIR='"$(abspath tests/walker)"' \
		-o $@ $(WALKER_SRC) $(RECORD_TEST_LIBS) $(LDFLAGS) -fno-sanitize=alignment -ldw -lelf
# the in-process launch walk (cupti/inproc_walk.c) in the test's own process, from a chain built
# without frame pointers; -rdynamic so that dladdr names the test's functions
$(BUILD)/tests/fixtures/inproc_chain.o: tests/walker/inproc_chain.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -c -o $@ $<
$(BUILD)/tests/test_inproc_walk: tests/walker/test_inproc_walk.c cupti/inproc_walk.c \
		cupti/walk_shim.h bpf/user_shim.h cupti/inproc_walk.h common/walk_share.h bpf/cfi_walk.bpf.h \
		bpf/py_walk.bpf.h bpf/xpu_bpf_abi.h $(BUILD)/tests/fixtures/inproc_chain.o \
		$(RECORD_TEST_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Icupti -Irecord -Ibpf -rdynamic -o $@ \
		tests/walker/test_inproc_walk.c cupti/inproc_walk.c \
		$(BUILD)/tests/fixtures/inproc_chain.o $(RECORD_TEST_LIBS) $(LDFLAGS) \
		-fno-sanitize=alignment -lelf -ldl -lpthread
# a library whose symbol table names versioned symbols, for the tables of a CPU-only report
$(BUILD)/tests/fixtures/versioned_syms.so: tests/unit/fixtures/versioned_syms.c \
		tests/unit/fixtures/versioned_syms.map
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -fPIC -shared -nostdlib -Wl,--build-id \
		-Wl,--version-script=tests/unit/fixtures/versioned_syms.map -o $@ $<
$(BUILD)/tests/test_cpu_report: $(BUILD)/tests/fixtures/versioned_syms.so
$(BUILD)/tests/test_cpu_report: CFLAGS += -DFIXTURE_DIR='"$(abspath $(BUILD))/tests/fixtures"'
# unit tests link the report library (they never include a .c file of report/)
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libxpureport.a $(BUILD)/libxpucommon.a
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Ireport -Itests/unit -o $@ $< $(wildcard tests/unit/lib_*.c) \
		$(BUILD)/libxpureport.a $(BUILD)/libxpucommon.a $(LDFLAGS) $(REPORT_LIBS)

# decodes --format=pprof with protobuf-c: it needs the generated header
ifeq ($(HAVE_PPROF),1)
$(BUILD)/tests/test_pprof: $(BUILD)/gen/profile.pb-c.h
$(BUILD)/tests/test_pprof: CFLAGS += $(REPORT_DEFS) -I$(BUILD)/gen
endif

# what record/python/py_layout.c says about each CPython, for tests/unit/test_py_layout.sh (it
# includes py_layout.c, to print its private _Py_DebugOffsets indexes)
$(BUILD)/tests/py_layout_ours: tests/unit/py_layout_ours.c record/python/py_layout.c record/python/py_layout.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Irecord -Ibpf -o $@ $< $(LDFLAGS) -lelf

unit: $(UNIT_BIN) $(BUILD)/tests/py_layout_ours $(BUILD)/tests/test_walker $(BUILD)/tests/test_inproc_walk

# ---- fuzzing: clang + libFuzzer, ASan + UBSan, in build-fuzz/ (tests/fuzz/run.sh) -------------
# The targets link the report library built for fuzzing (no main(): libFuzzer owns it).
FUZZ_BUILD := build-fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,$(FUZZ_BUILD)/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS := -O1 -g $(WARN) -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE \
	       -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -DXPU_VERSION='"fuzz"' -Icommon -Ireport $(REPORT_DEFS)
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(COMMON_SRC) $(REPORT_LIB_SRC) $(PPROF_GEN_SRC))

$(FUZZ_BUILD)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(FUZZ_BUILD)/gen/profile.pb-c.o: $(FUZZ_BUILD)/gen/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -I$(FUZZ_BUILD)/gen -c $< -o $@
ifeq ($(HAVE_PPROF),1)
$(FUZZ_BUILD)/report/output/out_pprof.o: $(FUZZ_BUILD)/gen/profile.pb-c.h
$(FUZZ_BUILD)/report/output/out_pprof.o: FUZZ_CFLAGS += -I$(FUZZ_BUILD)/gen
endif

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) $(wildcard tests/fuzz/*.h)
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(REPORT_LIBS)

$(FUZZ_BUILD)/trace2records: tests/fuzz/trace2records.c $(FUZZ_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(filter $(FUZZ_BUILD)/common/%,$(FUZZ_OBJ)) -lzstd

# a symbol pack's NAMES and WALKS entries as fuzz_pack seeds
$(FUZZ_BUILD)/pack2seed: tests/fuzz/pack2seed.c $(FUZZ_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(filter $(FUZZ_BUILD)/common/%,$(FUZZ_OBJ)) -lzstd

fuzz-build: $(FUZZ_TARGETS) $(FUZZ_BUILD)/trace2records $(FUZZ_BUILD)/pack2seed

fuzz:
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

# the packages each goal needs (scripts/install-deps.sh): demo installs only what it runs
deps:
	@scripts/install-deps.sh test
deps-demo:
	@scripts/install-deps.sh demo

# The builds of make test and make check use every CPU unless make was given -j itself (its
# jobserver then shares out the jobs it was given).
TEST_MAKE = $(MAKE) --no-print-directory $$(case "$$MAKEFLAGS" in *jobserver*) ;; \
	*) echo -j$$(nproc) ;; esac)

# Everything: every test (TEST_JOBS at a time, tests/run-tests.sh), and the unit and golden
# tests again under ASan and UBSan (build-san/). Their build runs beside the tests at idle
# priority (TEST_BACKGROUND), in the CPU time they leave; once it is done, the sanitizer tests
# join the same queue (TEST_AFTER_BACKGROUND), filling the job slots the others leave, rather
# than a second run after the first (a failed build is a failed test, with its log's end).
SAN_TEST_BUILD = $(TEST_MAKE) SAN=1 BUILD=build-san unit build-san/xpu-report build-san/libxpucommon.a \
	build-san/libxpureport.a
test: deps
	@$(TEST_MAKE) all unit
	@rm -f build/test-totals; start=$$(date +%s); rc=0; \
	TEST_BACKGROUND="$(SAN_TEST_BUILD)" TEST_AFTER_BACKGROUND=build-san \
		TEST_TOTALS=build/test-totals tests/run-tests.sh || rc=1; \
	awk -v s=$$(( $$(date +%s) - start )) '{ p += $$1; f += $$2; k += $$3 } \
		END { printf "make test: the tests took %dm%02ds\ntotal: %d passed, %d failed, %d skipped\n", \
		s / 60, s % 60, p, f, k }' build/test-totals; \
	exit $$rc

# The quick tier for the edit loop (under 3 minutes on 2 cores): the unit, golden and walker
# tests, the GPU mock, and the few e2e tests that tests/run-tests.sh names in CHECK_E2E; no
# fuzz round, no sanitizer pass.
check: deps
	@$(TEST_MAKE) all unit
	@TEST_TIER=check tests/run-tests.sh

# tests/test-times.seed, the runner's order for a fresh clone (no build/test-times yet), from
# the times of the last runs here: run after a full `make test` on an idle machine.
test-times-seed:
	@[ -r build/test-times ] || { echo "no build/test-times: run make test first" >&2; exit 1; }
	@{ sed -n '/^#/p' tests/test-times.seed; \
	for d in build build-san; do \
		if [ -r $$d/test-times ]; then sed "s|^|$$d |" $$d/test-times; fi; \
	done; } >tests/test-times.seed.new && mv tests/test-times.seed.new tests/test-times.seed
	@echo "tests/test-times.seed: $$(grep -vc '^#' tests/test-times.seed) times"

demo: deps-demo
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

# ---- install: PREFIX (default /usr/local) and DESTDIR; xpu-record finds the injected library
# from its own path, in ../lib/xpu-perf/, so the layout under PREFIX is fixed. The library is
# 0644: under sudo the command runs as the user, who must be able to read it. ---------------
PREFIX ?= /usr/local
INSTALL ?= install
XPU_BINDIR = $(DESTDIR)$(PREFIX)/bin
XPU_LIBDIR = $(DESTDIR)$(PREFIX)/lib/xpu-perf
INSTALL_TOOLS := $(BUILD)/xpu-record $(BUILD)/xpu-report
INSTALL_LIB := $(filter %/libxpu-cupti.so,$(TARGETS))

install: $(INSTALL_TOOLS) $(INSTALL_LIB)
	$(call msg,INSTALL,$(XPU_BINDIR))
	$(Q)$(INSTALL) -d $(XPU_BINDIR)
	$(Q)$(INSTALL) -m 0755 $(INSTALL_TOOLS) $(XPU_BINDIR)/
ifneq ($(INSTALL_LIB),)
	$(call msg,INSTALL,$(XPU_LIBDIR))
	$(Q)$(INSTALL) -d $(XPU_LIBDIR)
	$(Q)$(INSTALL) -m 0644 $(INSTALL_LIB) $(XPU_LIBDIR)/
endif

uninstall:
	$(call msg,RM,$(XPU_BINDIR)/xpu-record $(XPU_BINDIR)/xpu-report $(XPU_LIBDIR))
	$(Q)rm -f $(XPU_BINDIR)/xpu-record $(XPU_BINDIR)/xpu-report $(XPU_LIBDIR)/libxpu-cupti.so
	$(Q)if [ -d $(XPU_LIBDIR) ]; then rmdir $(XPU_LIBDIR); fi

clean:
	rm -rf build build-san build-fuzz

format:
	clang-format -i $(wildcard */*.c */*.h report/*/*.c report/*/*.h report/*/*/*.c report/*/*/*.h) \
		$(BPF_SRC)

.PHONY: all unit deps deps-demo test check test-times-seed demo clean format samples bench fuzz fuzz-build install uninstall

-include $(shell find $(BUILD) $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
