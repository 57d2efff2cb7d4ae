// SPDX-License-Identifier: MIT
/*
 * One TracePacket of the perfetto output: built in pf->pkt, its new interned entries gathered
 * in pf->interned, written as one Trace.packet field. Every packet is on one sequence; the
 * first after a reset of the interning tables says so (SEQ_INCREMENTAL_STATE_CLEARED) and
 * repeats the defaults (monotonic timestamps), which a reset clears too. Packets of a merged
 * trace's other hosts carry their machine_id (perfetto.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/perfetto/perfetto.h"

void pf__packet_begin(struct perfetto *pf, uint64_t ts)
{
	pf__intern_maybe_reset(pf);
	pb__reset(&pf->pkt);
	pb__reset(&pf->interned);
	if (ts)
		pb__varint(&pf->pkt, PKT_TIMESTAMP, ts);
}

static int put_packet(struct perfetto *pf, const struct pb *p)
{
	uint8_t hdr[12];
	size_t n = 0;

	if (p->oom)
		return -ENOMEM;
	hdr[n++] = TRACE_PACKET << 3 | 2;
	n += pf__varint(hdr + n, p->n);
	pf->packets++;
	return pf__write_bytes(pf, hdr, n, p->b, p->n);
}

int pf__write_packet(struct perfetto *pf, const struct pb *p)
{
	return put_packet(pf, p);
}

void pf__use_machine(struct perfetto *pf, uint32_t m)
{
	if (m == pf->machine)
		return;
	pf->machine = m;
	/* the other machine's interned entries are unknown to this one's reader */
	pf__intern_reset(pf);
}

uint32_t pf__host_machine(const struct perfetto *pf, const char *host)
{
	size_t i;

	for (i = 0; pf->hosts && host && i < pf->nhosts; i++)
		if (!strcmp(pf->hosts[i], host))
			return (uint32_t)i;
	return 0;
}

uint32_t pf__track_machine(const struct perfetto *pf, uint64_t uuid)
{
	return uuid < pf->ntrack_machine ? pf->track_machine[uuid] : 0;
}

int pf__packet_end(struct perfetto *pf, bool needs_state)
{
	struct pb *p = &pf->pkt;
	uint32_t flags = needs_state ? SEQ_NEEDS_INCREMENTAL_STATE : 0;

	pb__varint(p, PKT_SEQUENCE_ID, PF_SEQUENCE_ID);
	if (pf->machine)
		pb__varint(p, PKT_MACHINE_ID, pf->machine);
	if (pf->cleared) {
		flags |= SEQ_INCREMENTAL_STATE_CLEARED;
		pb__begin(p, PKT_TRACE_DEFAULTS);
		pb__varint(p, DEFAULTS_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
		pb__end(p);
		pf->cleared = false;
	}
	if (flags)
		pb__varint(p, PKT_SEQUENCE_FLAGS, flags);
	if (pf->interned.oom)
		return -ENOMEM;
	if (pf->interned.n)
		pb__bytes(p, PKT_INTERNED_DATA, pf->interned.b, pf->interned.n);
	return put_packet(pf, p);
}
