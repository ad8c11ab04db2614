/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where lowlatd is on the system bus: one spelling for the daemon (bus.c), which requests
 * and serves these, and for lowlatctl, which calls them. */
#pragma once

#define BUS_NAME "org.lowlatd1"
#define BUS_PATH "/org/lowlatd1"
#define BUS_INTERFACE "org.lowlatd1.Manager"
/* lowlatd's answer to a call over its limits (lowlatd(8), Limits): ask again later. */
#define BUS_ERROR_BUSY "org.lowlatd1.Error.Busy"
/* ReloadIfUnchanged()'s answer when the files are not those of the diff. */
#define BUS_ERROR_CONFIG_CHANGED "org.lowlatd1.Error.ConfigChanged"
/* The longest configuration text Diff() takes: a main file of 1,024 lines at most
 * CONFIG_LINE_MAX characters each. */
#define BUS_DIFF_TEXT_MAX (1024U * 1025U)
