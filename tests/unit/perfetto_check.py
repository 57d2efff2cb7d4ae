#!/usr/bin/env python3
"""Checks xpu-report --format=perfetto against --format=chrome of the same trace.

perfetto_check.py DECODED.txt CHROME.json [--frame SUBSTRING] [--samples N]
                  [--coinciding-samples] [--machines N]

--frame: some sampled frame's name holds SUBSTRING (Python frames: ".py"); --samples: the
trace's CPU samples, each of which must be a PerfSample; --coinciding-samples: the trace has
samples of one thread at one instant, which chrome's flame chart cannot show; --machines N:
the trace merges N hosts, each a machine_id (default 1: none written).

DECODED.txt is `protoc --decode=perfetto.protos.Trace format-spec/perfetto_subset.proto`
of the perfetto output. The two outputs must hold the same view: the same slices (category,
track, name, start, duration) event by event, the same instants, flows from every launch to
its GPU work (each starting on chrome's thread and time, and ending on the slice, by name and
start, that chrome's ends on), every CPU sample; and the perfetto file's interned data must
resolve (names, frames, call stacks). Times: chrome's are CLOCK_REALTIME microseconds on a 250 ns grid,
perfetto's CLOCK_MONOTONIC ns, mapped here through the file's own clock snapshots.
"""
import bisect
import codecs
import json
import sys
from collections import Counter, defaultdict

SLICE_CATS = ('cuda_api', 'nvtx', 'off_cpu', 'driver', 'kernel', 'memcpy', 'memset')
GPU_PID_BASE = 2000000000
SAMPLE_TID_BASE = 1000000000
TOL_US = 0.6  # two roundings to the 250 ns grid, and the clock map's interpolation

failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 20:
        print('FAIL', msg)


def value(v):
    if v.startswith('"'):
        return codecs.escape_decode(v[1:-1].encode('latin-1', 'backslashreplace'))[0].decode(
            'utf-8', 'replace')
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v  # an enum's name


def packets(path):
    """The top-level packets of protoc's text output, one dict (field -> [values]) each."""
    stack = []
    with open(path, encoding='latin-1') as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line == '}':
                d = stack.pop()
                if not stack:
                    yield d
                continue
            if line.endswith('{'):
                d = defaultdict(list)
                if stack:
                    stack[-1][line[:-1].strip()].append(d)
                stack.append(d)
                continue
            k, v = line.split(':', 1)
            stack[-1][k].append(value(v.strip().encode('latin-1').decode('utf-8', 'replace')
                                      if not v.strip().startswith('"') else v.strip()))
    if stack:
        fail('unbalanced protoc output')


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


class Perfetto:
    def __init__(self, path):
        self.names, self.cats, self.args = {}, {}, {}
        self.funcs, self.frames, self.stacks = {}, {}, {}
        self.tracks = {}
        self.process_names, self.thread_names = {}, {}
        self.process_machine = {}
        self.clocks = []
        self.slices, self.instants, self.counters = [], [], defaultdict(list)
        self.samples = 0
        self.sample_frames = Counter()
        self.flows = Counter()
        self.flow_events = defaultdict(list)  # id -> its events (slices get 'dur' when they end)
        self.first_cleared = None
        self.resets = 0
        self.seen = set()  # (table, iid) interned before a reset
        self.track_machine, self.machines = {}, Counter()
        state_machine = None  # the machine of the last reset: whose reader the state is
        open_ = {}
        n = 0
        for p in packets(path):
            n += 1
            flags = one(p, 'sequence_flags', 0)
            self.machine = one(p, 'machine_id', 0)
            self.machines[self.machine] += 1
            # each machine's packets are read apart (their own sequence state): a packet
            # using the state must be of the machine whose packet reset it last
            if flags & 1:
                state_machine = self.machine
            elif flags & 2 and state_machine != self.machine:
                fail('packet %d of machine %d uses the state of machine %s' %
                     (n, self.machine, state_machine))
            if self.first_cleared is None and flags:
                self.first_cleared = bool(flags & 1)
            if flags & 1:
                # a reset: what was interned before is gone; iids are never given again
                self.resets += 1
                for t in (self.names, self.cats, self.args, self.funcs, self.frames, self.stacks):
                    self.seen.update((id(t), k) for k in t)
                    t.clear()
                if 'trace_packet_defaults' not in p:
                    fail('packet %d clears the state without its defaults' % n)
            elif flags and self.first_cleared and 'trace_packet_defaults' in p:
                fail('packet %d: defaults without a reset' % n)
            if one(p, 'trusted_packet_sequence_id') != 1:
                fail('packet %d not on sequence 1' % n)
            for i in p.get('interned_data', []):
                self.intern(i)
            if 'clock_snapshot' in p:
                c = {one(x, 'clock_id'): one(x, 'timestamp') for x in p['clock_snapshot'][0]['clocks']}
                self.clocks.append((c[3], c[1]))
            if 'track_descriptor' in p:
                self.track(p['track_descriptor'][0])
            if 'perf_sample' in p:
                self.sample(p['perf_sample'][0])
            if 'track_event' in p:
                self.event(p, p['track_event'][0], open_)
        self.clocks.sort()
        if any(open_.values()):
            fail('slices begun and never ended')

    def intern(self, i):
        for k, table in (('event_names', self.names), ('event_categories', self.cats),
                         ('debug_annotation_names', self.args)):
            for e in i.get(k, []):
                if (id(table), one(e, 'iid')) in self.seen:
                    fail('%s: iid %s given again after a reset' % (k, one(e, 'iid')))
                table[one(e, 'iid')] = one(e, 'name')
        for e in i.get('function_names', []):
            self.funcs[one(e, 'iid')] = one(e, 'str')
        for e in i.get('frames', []):
            self.frames[one(e, 'iid')] = one(e, 'function_name_id')
            if one(e, 'function_name_id') not in self.funcs:
                fail('frame %s before its function name' % one(e, 'iid'))
        for e in i.get('callstacks', []):
            fr = e.get('frame_ids', [])
            for x in fr:
                if x not in self.frames:
                    fail('call stack %s: frame %s not interned' % (one(e, 'iid'), x))
            self.stacks[one(e, 'iid')] = [self.funcs.get(self.frames.get(x)) for x in fr]

    def track(self, t):
        u = one(t, 'uuid')
        if u in self.tracks:
            fail('track %d described twice' % u)
        par = one(t, 'parent_uuid')
        if par is not None and par not in self.tracks:
            fail('track %d: parent %d not described before' % (u, par))
        if par is not None and self.track_machine.get(par) != self.machine:
            fail('track %d of machine %d, its parent of %s' % (u, self.machine,
                                                               self.track_machine.get(par)))
        self.track_machine[u] = self.machine
        if 'thread' in t:
            th = t['thread'][0]
            key = ('thread', one(th, 'pid'), one(th, 'tid'))
            self.thread_names[(one(th, 'pid'), one(th, 'tid'))] = one(th, 'thread_name')
        elif 'process' in t:
            key = ('process', one(t['process'][0], 'pid'))
            self.process_names[key[1]] = one(t['process'][0], 'process_name')
            self.process_machine[key[1]] = self.machine
        elif par is not None:
            key = ('gpu', self.tracks[par][1] if par in self.tracks else '?', one(t, 'name'))
        else:
            key = ('device', one(t, 'name'))
        self.tracks[u] = key

    def sample(self, s):
        self.samples += 1
        if self.process_machine.get(one(s, 'pid')) != self.machine:
            fail('sample of pid %s on machine %d, its process on %s' %
                 (one(s, 'pid'), self.machine, self.process_machine.get(one(s, 'pid'))))
        iid = one(s, 'callstack_iid')
        if iid is not None:
            if iid not in self.stacks:
                fail('sample: call stack %s not interned' % iid)
            else:
                for f in self.stacks[iid]:
                    self.sample_frames[f] += 1

    def real_us(self, mono):
        """CLOCK_REALTIME us of a monotonic time: the offset interpolated between snapshots."""
        c = self.clocks
        if len(c) < 2:
            return (mono + (c[0][1] - c[0][0] if c else 0)) / 1000
        lo, hi = c[0], c[1]
        for k in range(1, len(c)):
            lo, hi = c[k - 1], c[k]
            if mono < c[k][0]:
                break
        o0, o1 = lo[1] - lo[0], hi[1] - hi[0]
        off = o0 + (o1 - o0) * (mono - lo[0]) / (hi[0] - lo[0]) if hi[0] > lo[0] else o0
        return (mono + off) / 1000

    def event(self, p, e, open_):
        ty, tr, ts = one(e, 'type'), one(e, 'track_uuid'), one(p, 'timestamp')
        if tr not in self.tracks:
            fail('event on undescribed track %s' % tr)
            return
        if self.track_machine[tr] != self.machine:
            fail('event of machine %d on track %d of machine %d' %
                 (self.machine, tr, self.track_machine[tr]))
        if ty == 'TYPE_COUNTER':
            v = one(e, 'counter_value', one(e, 'double_counter_value'))
            self.counters[self.tracks[tr]].append((ts, v))
            return
        if ty == 'TYPE_SLICE_END':
            if not open_.get(tr):
                fail('end without begin on track %s' % tr)
                return
            b = open_[tr].pop()
            b['dur'] = ts - b['ts']
            self.slices.append(b)
            return
        name = self.names.get(one(e, 'name_iid')) if 'name_iid' in e else one(e, 'name')
        if name is None:
            fail('event name iid %s not interned' % one(e, 'name_iid'))
        cats = [self.cats.get(c) for c in e.get('category_iids', [])]
        if None in cats:
            fail('category not interned')
        for a in e.get('debug_annotations', []):
            if one(a, 'name_iid') not in self.args:
                fail('annotation name not interned')
        ev = {'cat': cats[0] if cats else None, 'name': name, 'ts': ts, 'track': self.tracks[tr],
              'flows': e.get('flow_ids', [])}
        if 'callstack_iid' in e and one(e, 'callstack_iid') not in self.stacks:
            fail('event call stack not interned')
        for fl in ev['flows']:
            self.flows[fl] += 1
            self.flow_events[fl].append(ev)
        if ty == 'TYPE_SLICE_BEGIN':
            open_.setdefault(tr, []).append(ev)
        elif ty == 'TYPE_INSTANT':
            self.instants.append(ev)
        else:
            fail('event type %s' % ty)


def chrome(path):
    with open(path) as f:
        d = json.load(f)
    pname, tname = {}, {}
    ev = d['traceEvents']
    for e in ev:
        if e['ph'] == 'M' and e['name'] == 'process_name':
            pname[e['pid']] = e['args']['name']
        if e['ph'] == 'M' and e['name'] == 'thread_name':
            tname[(e['pid'], e['tid'])] = e['args']['name']

    def track(e):
        if e['pid'] >= GPU_PID_BASE:
            return ('gpu', pname.get(e['pid']), tname.get((e['pid'], e['tid'])))
        return ('thread', e['pid'], e['tid'])
    for e in ev:
        if e['ph'] != 'M':
            e['track'] = track(e)
    return ev, pname, tname


def compare(pf, ch, args):
    # slices, category by category: the same (track, name) multiset, starts and durations
    for cat in SLICE_CATS:
        a = defaultdict(list)
        b = defaultdict(list)
        for e in ch:
            if e['ph'] == 'X' and e.get('cat') == cat:
                a[(e['track'], e['name'])].append((e['ts'], e['dur']))
        for e in pf.slices:
            if e['cat'] == cat:
                b[(e['track'], e['name'])].append((pf.real_us(e['ts']), e['dur'] / 1000))
        na, nb = sum(map(len, a.values())), sum(map(len, b.values()))
        print('%-9s chrome %6d perfetto %6d' % (cat, na, nb))
        if na != nb:
            fail('%s: %d slices in chrome, %d in perfetto' % (cat, na, nb))
        for k in set(a) | set(b):
            if len(a[k]) != len(b[k]):
                fail('%s %s: %d in chrome, %d in perfetto' % (cat, k, len(a[k]), len(b[k])))
                continue
            for x, y in zip(sorted(t for t, _ in a[k]), sorted(t for t, _ in b[k])):
                if abs(x - y) > TOL_US:
                    fail('%s %s: starts at %.3f us in chrome, %.3f in perfetto' % (cat, k, x, y))
                    break
            for x, y in zip(sorted(d for _, d in a[k]), sorted(d for _, d in b[k])):
                if abs(x - y) > TOL_US:
                    fail('%s %s: lasts %.3f us in chrome, %.3f in perfetto' % (cat, k, x, y))
                    break
            ta, tb = sum(d for _, d in a[k]), sum(d for _, d in b[k])
            if abs(ta - tb) > TOL_US * len(a[k]) + 1e-6:
                fail('%s %s: %.3f us in all in chrome, %.3f in perfetto' % (cat, k, ta, tb))
    # instants: NVTX markers and launch markers; the flows' starts
    ci = Counter((e.get('cat'), e['name'], e['track']) for e in ch if e['ph'] == 'i')
    pi = Counter((e['cat'], e['name'], e['track']) for e in pf.instants if e['cat'] != 'launch')
    if ci != pi:
        fail('instants differ: chrome %s perfetto %s' % (sum(ci.values()), sum(pi.values())))
    starts = sum(1 for e in ch if e['ph'] == 's')
    ends = sum(1 for e in ch if e['ph'] == 'f')
    pstart = [e for e in pf.instants if e['cat'] == 'launch']
    pend = [e for e in pf.slices if e['flows']]
    print('flows     chrome %6d perfetto %6d' % (starts, len(pstart)))
    if starts != len(pstart) or ends != len(pend) or starts != ends:
        fail('flows: chrome %d starts %d ends, perfetto %d starts %d ends' %
             (starts, ends, len(pstart), len(pend)))
    if any(n != 2 for n in pf.flows.values()):
        fail('a flow id not on exactly two events')
    if Counter(e['track'] for e in ch if e['ph'] == 's') != Counter(e['track'] for e in pstart):
        fail('flows start on other threads')
    flow_ends(pf, ch)
    # samples: chrome's flame chart holds each sample once in its root slices
    cs = sum(e['args']['samples'] for e in ch
             if e['ph'] == 'X' and e.get('cat') == 'cpu' and e['args'].get('depth') == 0)
    print('samples   chrome %6d perfetto %6d' % (cs, pf.samples))
    # chrome leaves out a slice that rounds to nothing on its grid (two samples of a thread
    # at one instant): its samples are in no root slice; perfetto has no grid and keeps them
    if cs > pf.samples or (cs < pf.samples and not args.get('coinciding')):
        fail('samples: %d in chrome, %d in perfetto' % (cs, pf.samples))
    if 'samples' in args and pf.samples != args['samples']:
        fail('samples: %d in perfetto, %d in the trace' % (pf.samples, args['samples']))
    if pf.samples and not pf.sample_frames:
        fail('samples without interned call stacks')
    if args.get('frame') and not any(args['frame'] in (f or '') for f in pf.sample_frames):
        fail('no sampled frame holds %r' % args['frame'])
    # GPU memory: the same final and peak value per device
    cm = defaultdict(list)
    for e in ch:
        if e['ph'] == 'C' and e['name'] == 'gpu memory':
            cm[e['track'][1]].append((e['ts'], e['args']['allocated_bytes']))
    pm = {k[1]: v for k, v in pf.counters.items() if k[2] == 'gpu memory'}
    if set(cm) != set(pm):
        fail('memory counters of devices %s in chrome, %s in perfetto' % (sorted(cm), sorted(pm)))
    for k in cm:
        if k in pm and (max(v for _, v in cm[k]) != max(v for _, v in pm[k]) or
                        sorted(cm[k])[-1][1] != sorted(pm[k])[-1][1]):
            fail('memory counter of %s: peak or last value differs' % k)
    # GPU busy %: the same points, values and times
    cb = defaultdict(list)
    for e in ch:
        if e['ph'] == 'C' and e['name'] == 'busy %':
            cb[e['track'][1]].append((e['ts'], e['args']['kernels'], e['args']['copies']))
    pb = {}
    for k, v in pf.counters.items():
        if k[2] in ('busy % kernels', 'busy % copies'):
            pb.setdefault(k[1], {})[k[2]] = sorted(v)
    if set(cb) != set(pb):
        fail('busy counters of devices %s in chrome, %s in perfetto' % (sorted(cb), sorted(pb)))
    for dev, pts in cb.items():
        pts.sort()
        kern, cop = pb.get(dev, {}).get('busy % kernels', []), pb.get(dev, {}).get('busy % copies', [])
        if len(pts) != len(kern) or len(pts) != len(cop):
            fail('busy %% of %s: %d points in chrome, %d/%d in perfetto' % (dev, len(pts), len(kern), len(cop)))
            continue
        for (t, k, c), (tk, vk), (tc, vc) in zip(pts, kern, cop):
            if k != vk or c != vc or abs(t - pf.real_us(tk)) > TOL_US or tk != tc:
                fail('busy %% of %s at %.3f us: chrome %s/%s, perfetto %s/%s at %.3f' %
                     (dev, t, k, c, vk, vc, pf.real_us(tk)))
                break
    print('busy %%    chrome %6d perfetto %6d' % (sum(map(len, cb.values())),
                                                  sum(len(x.get('busy % kernels', [])) for x in pb.values())))
    if not pf.first_cleared:
        fail('the first packet does not start the incremental state')


def chrome_flows(ch):
    """Chrome's flows as (start track, start us, end track, end us, the end's slices): an "f"
    with bp "e" binds to a slice of its track that encloses it, (name, start us) each; work
    of one stream may overlap (the synthetic traces), so there may be several."""
    by_track = defaultdict(list)
    for e in ch:
        if e['ph'] == 'X' and e.get('cat') in ('kernel', 'memcpy', 'memset'):
            by_track[e['track']].append((e['ts'], e['dur'], e['name']))
    for v in by_track.values():
        v.sort()
    starts = {e['id']: e for e in ch if e['ph'] == 's'}
    out = []
    for e in ch:
        if e['ph'] != 'f':
            continue
        s = starts.get(e['id'])
        sl = by_track.get(e['track'], [])
        k = bisect.bisect_right(sl, (e['ts'] + TOL_US, float('inf')))
        # the slices that start by then and end after it (a stream's slices are few and
        # short beside its length: look back until the longest could no longer reach it)
        longest = max((d for _, d, _ in sl), default=0)
        ends = []
        while k > 0 and sl[k - 1][0] + longest + TOL_US >= e['ts']:
            t0, d, n = sl[k - 1]
            if t0 + d + TOL_US >= e['ts']:
                ends.append((n, t0))
            k -= 1
        if s is None or not ends:
            fail('chrome flow %s: no start or no enclosing slice' % e['id'])
            continue
        out.append((s['track'], s['ts'], e['track'], e['ts'], ends))
    return out


def flow_ends(pf, ch):
    """Each flow of the perfetto file starts where chrome's starts (thread, time) and ends on
    a slice chrome's ends on (stream, name, start): matched by content, not by id, pairing
    each with chrome's flow of the same end point (the work's middle)."""
    pfl = []
    for fid, evs in pf.flow_events.items():
        st = [e for e in evs if e['cat'] == 'launch']
        en = [e for e in evs if e['cat'] != 'launch']
        if len(st) != 1 or len(en) != 1:
            fail('perfetto flow %s: %d starts, %d ends' % (fid, len(st), len(en)))
            continue
        t0 = pf.real_us(en[0]['ts'])
        pfl.append((st[0]['track'], pf.real_us(st[0]['ts']), en[0]['track'],
                    t0 + en[0].get('dur', 0) / 2000, (en[0]['name'], t0)))
    cfl = chrome_flows(ch)
    a, b = defaultdict(list), defaultdict(list)
    for st, sts, et, ets, ends in cfl:
        a[(st, et)].append((ets, sts, ends))
    for st, sts, et, ets, end in pfl:
        b[(st, et)].append((ets, sts, end))
    bad = 0
    for k in set(a) | set(b):
        x, y = sorted(a[k], key=lambda v: v[:2]), sorted(b[k])
        if len(x) != len(y):
            bad += 1
            fail('flows from %s to %s: %d in chrome, %d in perfetto' % (k[0], k[1], len(x), len(y)))
            continue
        for (ce, cs, cn), (pe, ps, pn) in zip(x, y):
            if (abs(ce - pe) > 2 * TOL_US or abs(cs - ps) > TOL_US or
                    not any(n == pn[0] and abs(t - pn[1]) <= TOL_US for n, t in cn)):
                bad += 1
                fail('flow from %s to %s: chrome %.3f us -> %s, perfetto %.3f -> %r at %.3f' %
                     (k[0], k[1], cs, cn, ps, pn[0], pn[1]))
                break
    if bad:
        fail('flows of %d (thread, stream) pairs end on other slices than chrome\'s' % bad)
    print('flow ends chrome %6d perfetto %6d' % (len(cfl), len(pfl)))


def names(pf, pname, tname):
    """Processes and threads named as chrome names them ("comm pid", "comm tid")."""
    for pid, n in pf.process_names.items():
        want = pname.get(pid)
        if want not in (n, '%s %d' % (n, pid)):
            fail('process %d: %r in perfetto, %r in chrome' % (pid, n, want))
    for (pid, tid), n in pf.thread_names.items():
        want = tname.get((pid, tid))
        if want is None:  # a thread with samples only: chrome names its samples track
            want = tname.get((pid, SAMPLE_TID_BASE + tid), '').replace(' samples', '')
        if want not in ('%s %d' % (n, tid), 'tid %d' % tid):
            fail('thread %d: %r in perfetto, %r in chrome' % (tid, n, want))


def machines(pf, want):
    """--machines N: a merged trace of N hosts: a machine_id per host (0, left out, the
    first), every process of a host (its name's first word) on its machine, and none other."""
    got = sorted(pf.machines)
    if got != list(range(want)):
        fail('machine ids %s, expected 0..%d' % (got, want - 1))
    host_machine = defaultdict(set)
    for pid, name in pf.process_names.items():
        host = name.split()[0] if want > 1 and name else ''
        host_machine[host].add(pf.process_machine.get(pid))
    if want > 1 and (len(host_machine) != want or any(len(v) != 1 for v in host_machine.values())
                     or len(set().union(*host_machine.values())) != want):
        fail('hosts and machines: %s' % dict(host_machine))
    print('machines  %s' % ', '.join('%s: %d packets' % (m, pf.machines[m]) for m in got))


def main():
    a = sys.argv[1:]
    opts = {}
    if '--frame' in a:
        opts['frame'] = a[a.index('--frame') + 1]
    if '--samples' in a:
        opts['samples'] = int(a[a.index('--samples') + 1])
    opts['coinciding'] = '--coinciding-samples' in a
    pf = Perfetto(a[0])
    ch, pname, tname = chrome(a[1])
    compare(pf, ch, opts)
    names(pf, pname, tname)
    machines(pf, int(a[a.index('--machines') + 1]) if '--machines' in a else 1)
    if failures:
        print('%d failures' % len(failures))
        return 1
    if '--resets' in a and not pf.resets > 1:
        fail('no reset of the interning tables')
    print('ok: %d slices, %d instants, %d samples, %d interned frames, %d call stacks, %d resets' %
          (len(pf.slices), len(pf.instants), pf.samples, len(pf.frames), len(pf.stacks), pf.resets))
    return 0


if __name__ == '__main__':
    sys.exit(main())
