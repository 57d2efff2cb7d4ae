// SPDX-License-Identifier: MIT
/*
 * The perfetto output's tracks, each described (TrackDescriptor) the first time an event asks
 * for it, before that event's packet: a process track per traced process with a thread track
 * per thread (where its API calls, NVTX ranges, ioctls and off-CPU blocks nest, and its CPU
 * samples attach); a track per GPU device with a child track per (process, context, stream)
 * holding its kernels, copies and memsets, counters of its busy % (kernels, copies) and of its
 * allocated bytes.
 * uuids count up from 1: small varints, and no two tracks can share one.
 */
#include <stdio.h>
#include <string.h>

#include "output/perfetto/perfetto.h"

enum { TRACK_PROCESS = 1, TRACK_THREAD, TRACK_DEVICE, TRACK_STREAM, TRACK_MEMORY, TRACK_BUSY };

/* The uuid of a track of kind (a, b); *fresh when it is new (its descriptor to be written). */
static uint64_t track(struct perfetto *pf, unsigned kind, uint32_t a, uint64_t b, bool *fresh)
{
	uint32_t *v;

	*fresh = false;
	v = kmap__get(&pf->tracks, (uint64_t)kind << 32 | a, b);
	if (v)
		return *v;
	if (pf->next_uuid >= UINT32_MAX - 1)
		return 0;
	v = kmap__put(&pf->tracks, (uint64_t)kind << 32 | a, b, (uint32_t)(pf->next_uuid + 1), fresh);
	if (!v)
		return 0;
	pf->next_uuid++;
	return *v;
}

/* Writes the descriptor of uuid, a track of machine m's (its events are that machine's). */
static uint64_t describe(struct perfetto *pf, struct pb *d, uint64_t uuid, uint32_t m)
{
	pb__end(d);
	pb__varint(d, PKT_SEQUENCE_ID, PF_SEQUENCE_ID);
	if (pf->hosts) {
		while (pf->ntrack_machine <= uuid)
			if (VEC_PUSH(pf->track_machine, pf->ntrack_machine, pf->track_machine_cap, 0))
				return 0;
		pf->track_machine[uuid] = m;
		pf__use_machine(pf, m);
		if (m)
			pb__varint(d, PKT_MACHINE_ID, m);
	}
	return pf__write_packet(pf, d) ? 0 : uuid;
}

static void open_desc(struct pb *d, uint64_t uuid, uint64_t parent, const char *name)
{
	pb__reset(d);
	pb__begin(d, PKT_TRACK_DESCRIPTOR);
	pb__varint(d, TD_UUID, uuid);
	if (parent)
		pb__varint(d, TD_PARENT_UUID, parent);
	if (name)
		pf__str(d, TD_NAME, name, strlen(name));
}

static uint64_t process_track(struct perfetto *pf, uint32_t pid)
{
	char name[360], place[300], cb[32];
	const char *comm;
	struct pb *d = &pf->desc;
	bool fresh;
	uint64_t uuid = track(pf, TRACK_PROCESS, pid, 0, &fresh);

	if (!uuid || !fresh)
		return uuid;
	comm = trace__comm(pf->t, pid, cb, sizeof(cb));
	/*
	 * Several traces or ranks: where the process ran and the pid its host knew, as the chrome
	 * output says it. The descriptor's pid is the trace's, which merging keeps distinct (two
	 * hosts' processes of one pid would be one process to Perfetto).
	 */
	if (session__has_places(pf->ses) && *session__process_place(pf->ses, pid, place, sizeof(place)))
		snprintf(name, sizeof(name), "%s pid %u (%s)", place, session__process_pid(pf->ses, pid),
			 comm);
	else
		snprintf(name, sizeof(name), "%s", comm);
	open_desc(d, uuid, 0, NULL);
	pb__begin(d, TD_PROCESS);
	pb__varint(d, PD_PID, pid);
	pf__str(d, PD_PROCESS_NAME, name, strlen(name));
	pb__end(d);
	return describe(pf, d, uuid, pf__host_machine(pf, trace__host(pf->t, pid)));
}

uint64_t pf__thread_track(struct perfetto *pf, uint32_t pid, uint32_t tid)
{
	const struct tr_thread *tt;
	const char *n;
	struct pb *d = &pf->desc;
	bool fresh;
	uint64_t parent = process_track(pf, pid), uuid;

	if (!parent)
		return 0;
	uuid = track(pf, TRACK_THREAD, pid, tid, &fresh);
	if (!uuid || !fresh)
		return uuid;
	tt = trace__thread(pf->t, tid);
	n = tt ? trace__string(pf->t, tt->comm_str) : NULL;
	open_desc(d, uuid, parent, NULL);
	pb__begin(d, TD_THREAD);
	pb__varint(d, THD_PID, pid);
	pb__varint(d, THD_TID, tid);
	if (n && *n)
		pf__str(d, THD_THREAD_NAME, n, strlen(n));
	pb__end(d);
	return describe(pf, d, uuid, pf__track_machine(pf, parent));
}

uint64_t pf__device_track(struct perfetto *pf, uint32_t device)
{
	const struct trace *t = pf->t;
	const char *dn = NULL, *host;
	char name[320];
	bool fresh;
	uint64_t uuid = track(pf, TRACK_DEVICE, device, 0, &fresh);
	uint32_t dev;
	size_t j;
	int n;

	if (!uuid || !fresh)
		return uuid;
	for (j = 0; j < t->ndevices && !dn; j++) {
		if (t->devices[j].device == device)
			dn = trace__string(t, t->devices[j].name_str);
	}
	dev = trace__real_device(t, device, &host);
	if (dn && *dn)
		n = snprintf(name, sizeof(name), "GPU %u (%s)", dev, dn);
	else
		n = snprintf(name, sizeof(name), "GPU %u", dev);
	if (t->nparts > 1 && *host && n > 0 && (size_t)n < sizeof(name))
		snprintf(name + n, sizeof(name) - n, " on %s", host);
	open_desc(&pf->desc, uuid, 0, name);
	return describe(pf, &pf->desc, uuid, pf__host_machine(pf, host));
}

uint64_t pf__stream_track(struct perfetto *pf, uint32_t device, uint32_t pid, uint32_t context,
			  uint32_t stream)
{
	uint64_t ka = (uint64_t)device << 32 | pid, kb = (uint64_t)context << 32 | stream;
	uint64_t parent = pf__device_track(pf, device);
	uint32_t *v;
	char name[96];
	bool fresh;

	if (!parent)
		return 0;
	v = kmap__get(&pf->streams, ka, kb);
	if (v)
		return *v;
	if (pf->next_uuid >= UINT32_MAX - 1)
		return 0;
	v = kmap__put(&pf->streams, ka, kb, (uint32_t)(pf->next_uuid + 1), &fresh);
	if (!v)
		return 0;
	pf->next_uuid++;
	if (pf->gpu_pids_many)
		snprintf(name, sizeof(name), "stream %u (pid %u)", stream,
			 session__process_pid(pf->ses, pid));
	else
		snprintf(name, sizeof(name), "stream %u", stream);
	open_desc(&pf->desc, *v, parent, name);
	return describe(pf, &pf->desc, *v, pf__track_machine(pf, parent));
}

uint64_t pf__memory_track(struct perfetto *pf, uint32_t device)
{
	bool fresh;
	uint64_t parent = pf__device_track(pf, device), uuid;

	if (!parent)
		return 0;
	uuid = track(pf, TRACK_MEMORY, device, 0, &fresh);
	if (!uuid || !fresh)
		return uuid;
	open_desc(&pf->desc, uuid, parent, "gpu memory");
	pb__begin(&pf->desc, TD_COUNTER);
	pb__varint(&pf->desc, CD_UNIT, CD_UNIT_SIZE_BYTES);
	pb__end(&pf->desc);
	return describe(pf, &pf->desc, uuid, pf__track_machine(pf, parent));
}

uint64_t pf__busy_track(struct perfetto *pf, uint32_t device, bool copies)
{
	bool fresh;
	uint64_t parent = pf__device_track(pf, device), uuid;

	if (!parent)
		return 0;
	uuid = track(pf, TRACK_BUSY, device, copies, &fresh);
	if (!uuid || !fresh)
		return uuid;
	open_desc(&pf->desc, uuid, parent, copies ? "busy % copies" : "busy % kernels");
	pb__begin(&pf->desc, TD_COUNTER);
	pb__end(&pf->desc);
	return describe(pf, &pf->desc, uuid, pf__track_machine(pf, parent));
}
