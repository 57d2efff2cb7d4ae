// SPDX-License-Identifier: MIT
/* Becoming the sudo user in a child (see user_creds.h). */
#include <errno.h>
#include <grp.h>
#include <unistd.h>

#include "user_creds.h"

void user_creds__load(struct user_creds *c, uid_t uid, gid_t gid, const char *user)
{
	c->uid = uid;
	c->gid = gid;
	c->groups[0] = gid;
	c->ngroups = USER_CREDS_MAX_GROUPS;
	if (!user || getgrouplist(user, gid, c->groups, &c->ngroups) < 0) {
		c->groups[0] = gid;
		c->ngroups = 1;
	}
}

int user_creds__become(const struct user_creds *c)
{
	/* groups, then gid, then uid: each step needs the root the next one gives up */
	if (setgroups((size_t)c->ngroups, c->groups) || setgid(c->gid) || setuid(c->uid))
		return -errno;
	/* setuid() from root drops the saved uid too; make sure nothing can be regained */
	if (c->uid != 0 && (setuid(0) == 0 || geteuid() != c->uid))
		return -EPERM;
	return 0;
}
