/* SPDX-License-Identifier: MIT */
/*
 * The capture site of GPU work replayed from a CUDA graph (model/gpu_graph.h), in one name for
 * the timeline (chrome) and jsonl: the capture launch's site by the rule of the text report's
 * launch sites and jsonl's launches (model/user_code.h): the innermost frame of the program's
 * own code, a Python one with its line ("decode_step (model.py:41)"), else the op.
 */
#ifndef XPU_REPORT_MODEL_GRAPH_SITE_H
#define XPU_REPORT_MODEL_GRAPH_SITE_H

#include "model/session.h"
#include "model/user_code.h"

/*
 * 1 with *site (uc's names) for work under its capture stack; 0 for any other (a replay that
 * stays under its replay's stack: gpu_graph__fate_name(w->graph) says why, or a capture
 * stack not named: NAME_GRAPH_SITES left out); -ENOMEM.
 */
int graph_site__name(struct user_code *uc, const struct gpu_work *w, const char **site);

#endif
