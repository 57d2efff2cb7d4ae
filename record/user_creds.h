/* SPDX-License-Identifier: MIT */
/*
 * The identity of the user who ran sudo, for the children that must act as that user and not
 * as root: the launched command (target.c) and the reader of the symbol pack (symbol_pack.c),
 * which opens paths the traced processes control.
 */
#ifndef XPU_RECORD_USER_CREDS_H
#define XPU_RECORD_USER_CREDS_H

#include <sys/types.h>

#define USER_CREDS_MAX_GROUPS 256

struct user_creds {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[USER_CREDS_MAX_GROUPS];
};

/*
 * uid and gid, and user's supplementary groups (just gid when user is NULL or unknown). The
 * lookup goes through NSS (files, LDAP...), which is not safe in the child of a threaded
 * process: call it before fork.
 */
void user_creds__load(struct user_creds *c, uid_t uid, gid_t gid, const char *user);
/* In a child, before exec: becomes that user, for good. 0 or negative errno; system calls only. */
int user_creds__become(const struct user_creds *c);

#endif
