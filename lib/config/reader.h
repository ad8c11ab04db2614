/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading one file of lowlatd.conf into a Config (reader.c). */
#pragma once

#include <stdio.h>

#include "config/config.h"

/* Reads name's lines from f, or from text when f is NULL, into c: sections, keys and
 * values through the key table, every problem into errors as "name:line: reason". The
 * digest takes the file in as digest_name (NULL: name): a text read in place of a file
 * digests as that file would (lowlatctl diff FILE, then reload --if-unchanged).
 * Returns 0 when it was read (even with errors), -EIO on a read error (recorded), -ENOMEM. */
int config_read(Config *c, const char *name, const char *digest_name, FILE *f, const char *text, ErrorList *errors);
