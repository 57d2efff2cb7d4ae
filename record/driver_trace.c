// SPDX-License-Identifier: MIT
/*
 * xpu-record --driver. Which files are NVIDIA device files is decided in BPF by the device's
 * major (a cheap test on every ioctl of the traced tree); their names are looked up here, once,
 * from /dev, so the events carry only the device number.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "config.h"
#include "driver.skel.h"
#include "driver_bpf_abi.h"
#include "driver_trace.h"
#include "map_handler.h"
#include "writer_thread.h"

/* Character devices of this major are NVIDIA's whatever /proc/devices says. */
#define NVIDIA_MAJOR 195
#define MAX_NAMES 64

/* The modules' ioctl entry points (file_operations.unlocked_ioctl), newest name first. */
static const char *const nv_entries[] = { "nvidia_unlocked_ioctl", "nvidia_frontend_unlocked_ioctl",
					  NULL };
static const char *const uvm_entries[] = { "uvm_unlocked_ioctl_entry", "uvm_unlocked_ioctl", NULL };

struct dev_name {
	uint32_t rdev;			/* kernel encoding; 0 for a test file */
	uint32_t sdev;			/* test file: its filesystem's device, kernel encoding */
	uint64_t ino;
	char *path;
};

struct driver_trace {
	struct map_handler h;		/* takes XPU_EV_DRIVER_IOCTL */
	struct writer_thread *wt;
	struct driver_bpf *skel;
	struct bpf_link *links[6];
	unsigned int nr_links;
	unsigned int entry_points;	/* fentry/fexit pairs attached */
	const char *nv_entry;		/* BTF function names to attach to, or NULL */
	const char *uvm_entry;
	uint32_t majors[XPU_DRV_MAX_MAJORS];
	unsigned int nr_majors;
	struct dev_name names[MAX_NAMES];
	unsigned int nr_names;
	unsigned int nr_test_files;
};

static uint32_t kdev(dev_t d)
{
	return (uint32_t)major(d) << 20 | (minor(d) & 0xfffff);
}

static void add_major(struct driver_trace *dt, uint32_t m)
{
	unsigned int i;

	for (i = 0; i < dt->nr_majors; i++)
		if (dt->majors[i] == m)
			return;
	if (dt->nr_majors < XPU_DRV_MAX_MAJORS)
		dt->majors[dt->nr_majors++] = m;
}

/* 195 and every character major /proc/devices names nvidia* (nvidia-uvm's is dynamic). */
static void find_majors(struct driver_trace *dt)
{
	FILE *f = fopen("/proc/devices", "re");
	char line[128], name[64];
	bool chr = false;
	unsigned int m;

	add_major(dt, NVIDIA_MAJOR);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character devices:", 18))
			chr = true;
		else if (!strncmp(line, "Block devices:", 14))
			chr = false;
		else if (chr && sscanf(line, "%u %63s", &m, name) == 2 && !strncmp(name, "nvidia", 6))
			add_major(dt, m);
	}
	fclose(f);
}

static void add_name(struct driver_trace *dt, uint32_t rdev, uint32_t sdev, uint64_t ino,
		     const char *path)
{
	struct dev_name *n;

	if (dt->nr_names >= MAX_NAMES)
		return;
	n = &dt->names[dt->nr_names];
	n->path = strdup(path);
	if (!n->path)
		return;
	n->rdev = rdev;
	n->sdev = sdev;
	n->ino = ino;
	dt->nr_names++;
}

/* /dev/nvidia* character devices by device number: nvidiactl, nvidia0.., nvidia-uvm... */
static void find_device_files(struct driver_trace *dt)
{
	DIR *d = opendir("/dev");
	struct dirent *e;
	char path[300];
	struct stat sb;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "nvidia", 6))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (!stat(path, &sb) && S_ISCHR(sb.st_mode))
			add_name(dt, kdev(sb.st_rdev), 0, 0, path);
	}
	closedir(d);
}

/* XPU_DRIVER_TEST_PATHS=FILE[:FILE...]: the tests' stand-ins for device files. */
static int find_test_files(struct driver_trace *dt)
{
	const char *env = getenv("XPU_DRIVER_TEST_PATHS");
	char *list, *p, *save = NULL;
	struct stat sb;

	if (!env || !*env)
		return 0;
	list = strdup(env);
	if (!list)
		return -ENOMEM;
	for (p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
		if (stat(p, &sb)) {
			log_err("XPU_DRIVER_TEST_PATHS: %s: %s", p, strerror(errno));
			continue;
		}
		add_name(dt, 0, kdev(sb.st_dev), sb.st_ino, p);
		dt->nr_test_files++;
	}
	free(list);
	return 0;
}

/* The first of names that module's BTF (or vmlinux's, module NULL) has as a function. */
static const char *find_entry(struct btf *vmlinux, const char *module, const char *const *names)
{
	struct btf *b = vmlinux;
	const char *found = NULL;
	char path[128];

	if (module) {
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", module);
		if (access(path, R_OK))
			return NULL;
		b = btf__parse_split(path, vmlinux);
		if (!b)
			return NULL;
	}
	for (; *names && !found; names++)
		if (btf__find_by_name_kind(b, *names, BTF_KIND_FUNC) > 0)
			found = *names;
	if (b != vmlinux)
		btf__free(b);
	return found;
}

static void find_entries(struct driver_trace *dt)
{
	static const char *test_entry[2];
	struct btf *vmlinux = btf__load_vmlinux_btf();

	if (!vmlinux) {
		log_info("--driver: no kernel BTF: time inside the driver is not measured");
		return;
	}
	test_entry[0] = getenv("XPU_DRIVER_TEST_ENTRY");
	if (test_entry[0] && *test_entry[0]) {
		dt->nv_entry = find_entry(vmlinux, NULL, test_entry);
		if (!dt->nv_entry)
			log_err("XPU_DRIVER_TEST_ENTRY: no function %s in the kernel's BTF",
				test_entry[0]);
	} else {
		dt->nv_entry = find_entry(vmlinux, "nvidia", nv_entries);
		dt->uvm_entry = find_entry(vmlinux, "nvidia_uvm", uvm_entries);
		if (!dt->nv_entry)
			log_info("--driver: no BTF for the nvidia module's ioctl entry point "
				 "(/sys/kernel/btf/nvidia): ioctl times are syscall times");
	}
	btf__free(vmlinux);
}

static void pick_entry(struct bpf_program *enter, struct bpf_program *exit_prog, const char *fn)
{
	bool on = fn && !bpf_program__set_attach_target(enter, 0, fn) &&
		  !bpf_program__set_attach_target(exit_prog, 0, fn);

	bpf_program__set_autoload(enter, on);
	bpf_program__set_autoload(exit_prog, on);
}

static int open_load(struct driver_trace *dt, int traced_fd, int events_fd, bool entries)
{
	struct driver_bpf *s = driver_bpf__open();
	unsigned int i;
	int ret;

	if (!s)
		return -errno;
	for (i = 0; i < dt->nr_majors; i++)
		s->rodata->nv_majors[i] = dt->majors[i];
	s->rodata->nr_nv_majors = dt->nr_majors;
	s->rodata->have_test_files = dt->nr_test_files > 0;
	pick_entry(s->progs.on_nv_ioctl_enter, s->progs.on_nv_ioctl_exit,
		   entries ? dt->nv_entry : NULL);
	pick_entry(s->progs.on_uvm_ioctl_enter, s->progs.on_uvm_ioctl_exit,
		   entries ? dt->uvm_entry : NULL);
	ret = bpf_map__reuse_fd(s->maps.traced_tgids, traced_fd);
	if (!ret)
		ret = bpf_map__reuse_fd(s->maps.events, events_fd);
	if (!ret)
		ret = driver_bpf__load(s);
	if (ret) {
		driver_bpf__destroy(s);
		return ret < 0 ? ret : -EINVAL;
	}
	dt->skel = s;
	return 0;
}

static int add_test_files(struct driver_trace *dt)
{
	unsigned int i;
	uint8_t one = 1;

	for (i = 0; i < dt->nr_names; i++) {
		struct xpu_drv_file_key k = { .ino = dt->names[i].ino, .sdev = dt->names[i].sdev };

		if (dt->names[i].rdev)
			continue;
		if (bpf_map__update_elem(dt->skel->maps.test_files, &k, sizeof(k), &one,
					 sizeof(one), BPF_ANY))
			return -errno;
	}
	return 0;
}

static void on_event(struct map_handler *h, const void *data, size_t size);

struct driver_trace *driver_trace__load(int traced_fd, int events_fd, char *err, size_t errlen)
{
	struct driver_trace *dt = calloc(1, sizeof(*dt));

	bool entries;
	int ret;

	if (!dt) {
		snprintf(err, errlen, "--driver: out of memory");
		return NULL;
	}
	dt->h = (struct map_handler){
		.name = "driver",
		.on_event = on_event,
		.events = { XPU_EV_DRIVER_IOCTL },
	};
	find_majors(dt);
	find_device_files(dt);
	if (find_test_files(dt)) {
		snprintf(err, errlen, "--driver: out of memory");
		goto fail;
	}
	find_entries(dt);
	entries = dt->nv_entry || dt->uvm_entry;
	ret = open_load(dt, traced_fd, events_fd, entries);
	if (ret && entries) {
		/* a module function the verifier or the kernel refuses: keep the syscall view */
		log_err("--driver: cannot probe the driver's ioctl entry points (%s); ioctl times "
			"are syscall times", strerror(-ret));
		dt->nv_entry = dt->uvm_entry = NULL;
		ret = open_load(dt, traced_fd, events_fd, false);
	}
	if (ret) {
		snprintf(err, errlen, "--driver: loading the ioctl programs: %s; ioctls are not "
			 "recorded", strerror(-ret));
		goto fail;
	}
	ret = add_test_files(dt);
	if (ret) {
		snprintf(err, errlen, "--driver: XPU_DRIVER_TEST_PATHS: %s", strerror(-ret));
		goto fail;
	}
	return dt;
fail:
	driver_trace__destroy(dt);
	return NULL;
}

static int attach(struct driver_trace *dt, struct bpf_program *prog)
{
	struct bpf_link *link = bpf_program__attach(prog);

	if (!link)
		return -errno;
	dt->links[dt->nr_links++] = link;
	return 0;
}

int driver_trace__attach(struct driver_trace *dt, char *err, size_t errlen)
{
	struct driver_bpf *s = dt->skel;
	int ret;

	if (dt->nv_entry && !attach(dt, s->progs.on_nv_ioctl_enter) &&
	    !attach(dt, s->progs.on_nv_ioctl_exit))
		dt->entry_points++;
	if (dt->uvm_entry && !attach(dt, s->progs.on_uvm_ioctl_enter) &&
	    !attach(dt, s->progs.on_uvm_ioctl_exit))
		dt->entry_points++;
	if ((dt->nv_entry || dt->uvm_entry) && !dt->entry_points)
		log_err("--driver: cannot attach to the driver's ioctl entry points: ioctl times "
			"are syscall times");
	ret = attach(dt, s->progs.on_ioctl_enter);
	if (!ret)
		ret = attach(dt, s->progs.on_ioctl_exit);
	if (ret) {
		snprintf(err, errlen, "--driver: cannot attach to syscalls:sys_enter_ioctl/"
			 "sys_exit_ioctl: %s; ioctls are not recorded", strerror(-ret));
		return ret;
	}
	log_info("--driver: ioctls on %u device majors, %u named files, %u driver entry points "
		 "timed", dt->nr_majors, dt->nr_names, dt->entry_points);
	return 0;
}

static const char *file_name(const struct driver_trace *dt, const struct xpu_ev_ioctl *ev,
			     char *buf, size_t size)
{
	unsigned int i;

	for (i = 0; i < dt->nr_names; i++) {
		const struct dev_name *n = &dt->names[i];

		if ((ev->flags & XPU_EV_IOCTL_TEST_FILE) ?
			    !n->rdev && n->ino == ev->ino && n->sdev == ev->sdev :
			    n->rdev && n->rdev == ev->rdev)
			return n->path;
	}
	snprintf(buf, size, "char %u:%u", ev->rdev >> 20, ev->rdev & 0xfffff);
	return buf;
}

/* One XPU_EV_DRIVER_IOCTL event becomes a DRIVER_IOCTL record. */
static void on_event(struct map_handler *h, const void *data, size_t size)
{
	struct driver_trace *dt = (struct driver_trace *)((char *)h - offsetof(struct driver_trace, h));
	const struct xpu_ev_ioctl *ev = data;
	struct xpu_rec_driver_ioctl rec = { 0 };
	struct wt_rec r = {
		.type = XPU_REC_DRIVER_IOCTL,
		.body = &rec,
		.body_size = sizeof(rec),
		.nr_str = 1,
	};
	char buf[32];

	if (size < sizeof(*ev))
		return;
	rec.start_ns = ev->start_ns;
	rec.end_ns = ev->hdr.ts_ns;
	rec.driver_ns = ev->driver_ns;
	rec.ret = ev->ret;
	rec.pid = ev->hdr.pid;
	rec.tid = ev->hdr.tid;
	rec.request = ev->cmd;
	rec.fd = ev->fd;
	rec.rdev = ev->rdev;
	rec.flags = (ev->flags & XPU_EV_IOCTL_DRIVER_TIMED) ? XPU_IOCTL_DRIVER_TIMED : 0;
	r.ts_ns = rec.start_ns;
	r.str[0].off = offsetof(struct xpu_rec_driver_ioctl, file_str);
	r.str[0].s = file_name(dt, ev, buf, sizeof(buf));
	r.str[0].len = (uint32_t)strlen(r.str[0].s);
	writer_thread__submit(dt->wt, &r);
}

static void read_counters(struct driver_trace *dt, uint64_t *out)
{
	int nr = libbpf_num_possible_cpus(), c;
	uint32_t key;
	uint64_t *vals;

	memset(out, 0, XPU_DRV_CNT_NR * sizeof(*out));
	if (nr <= 0 || !(vals = calloc(nr, sizeof(*vals))))
		return;
	for (key = 0; key < XPU_DRV_CNT_NR; key++) {
		if (bpf_map__lookup_elem(dt->skel->maps.drv_counters, &key, sizeof(key), vals,
					 nr * sizeof(*vals), 0))
			continue;
		for (c = 0; c < nr; c++)
			out[key] += vals[c];
	}
	free(vals);
}

struct map_handler *driver_trace__handler(struct driver_trace *dt, struct writer_thread *wt)
{
	dt->wt = wt;
	return &dt->h;
}

unsigned int driver_trace__finish(struct driver_trace *dt, struct writer_thread *wt,
				  struct xpu_stat_entry *stats, unsigned int room)
{
	uint64_t cnt[XPU_DRV_CNT_NR];
	unsigned int n = 0;

	read_counters(dt, cnt);
	if (cnt[XPU_DRV_CNT_RB_LOST]) {
		struct xpu_rec_lost lost = {
			.ts_ns = clock_mono_ns(),
			.source = XPU_LOST_RINGBUF,
			.count = cnt[XPU_DRV_CNT_RB_LOST],
		};
		struct wt_rec r = {
			.type = XPU_REC_LOST, .ts_ns = lost.ts_ns,
			.body = &lost, .body_size = sizeof(lost), .must_keep = true,
		};

		writer_thread__submit(wt, &r);
		log_err("warning: %llu ioctl events lost (ring buffer full; try --ringbuf-mb)",
			(unsigned long long)cnt[XPU_DRV_CNT_RB_LOST]);
	}
	/* its rows of xpu_stats.def */
	if (n + 3 <= room) {
		stats[n++] = (struct xpu_stat_entry){ .id = XPU_STAT_DRIVER_IOCTLS,
						      .value = cnt[XPU_DRV_CNT_IOCTLS] };
		stats[n++] = (struct xpu_stat_entry){
			.id = XPU_STAT_DRIVER_IOCTL_LOST,
			.value = cnt[XPU_DRV_CNT_RB_LOST] + cnt[XPU_DRV_CNT_INFLIGHT_FULL] };
		stats[n++] = (struct xpu_stat_entry){ .id = XPU_STAT_DRIVER_ENTRY_POINTS,
						      .value = dt->entry_points };
	}
	return n;
}

void driver_trace__destroy(struct driver_trace *dt)
{
	unsigned int i;

	if (!dt)
		return;
	for (i = 0; i < dt->nr_links; i++)
		bpf_link__destroy(dt->links[i]);
	driver_bpf__destroy(dt->skel);
	for (i = 0; i < dt->nr_names; i++)
		free(dt->names[i].path);
	free(dt);
}
