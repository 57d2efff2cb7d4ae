/* SPDX-License-Identifier: MIT */
/*
 * The capture site of GPU work replayed from a CUDA graph (model/gpu_graph.h), in one name for
 * the timelines (chrome, perfetto) and jsonl: the innermost Python frame of the capture stack
 * ("decode_step (model.py)"), else the innermost frame of the capture stack less CUDA's own.
 */
#ifndef XPU_REPORT_MODEL_GRAPH_SITE_H
#define XPU_REPORT_MODEL_GRAPH_SITE_H

#include "model/session.h"

/*
 * 1 with *site (the session's pool) for work under its capture stack; 0 for any other (a
 * replay that stays under its replay stack: gpu_graph__fate_name(w->graph) says why), or
 * when the capture stack was not named (NAME_GRAPH_SITES left out).
 */
int graph_site__name(const struct session *s, const struct gpu_work *w, const char **site);

#endif
