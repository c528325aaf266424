/* The loop stall detector (RV_LOOP_STALL_MS), a diagnosis aid. */
#ifndef RVS_LOOP_STALL_H
#define RVS_LOOP_STALL_H

#include <ev.h>

/* Watch the loop when RV_LOOP_STALL_MS names a threshold; else nothing. */
void rvs_loop_stall_watch(struct ev_loop *loop);

#endif
