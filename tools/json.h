/*
 * The tool's JSON, built with cJSON (Debian: libcjson-dev) and printed by it, so that
 * escaping and number formats are cJSON's. Without cJSON at configure time
 * (TPEVENT_CJSON=AUTO finds none, or OFF) the tool is built without --json:
 * TPEVENT_TOOL_HAVE_CJSON is 0 and the commands refuse --json with
 * tool_json_unavailable().
 *
 * A json_doc remembers whether any addition failed (cJSON answers NULL when out of
 * memory), so that a document is written whole or not at all.
 */
#ifndef TPEVENT_TOOL_JSON_H
#define TPEVENT_TOOL_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include <tpevent/tpevent.h>

#include "host.h"

#ifndef TPEVENT_TOOL_HAVE_CJSON
#define TPEVENT_TOOL_HAVE_CJSON 0
#endif

/* Prints why --json is not there to stderr; returns TOOL_EXIT_USAGE. */
int tool_json_unavailable(const char *command);

#if TPEVENT_TOOL_HAVE_CJSON

#include <cjson/cJSON.h>

typedef struct json_doc {
    cJSON *root;
    bool failed;
} json_doc;

/* The document's root object. */
cJSON *json_begin(json_doc *doc);
/* Writes the document on one line and a newline, and frees it; false if it could
 * not be made. */
bool json_end(json_doc *doc, FILE *out);

/* Members of `object`; a NULL string is JSON null. */
void json_string(json_doc *doc, cJSON *object, const char *name, const char *value);
void json_number(json_doc *doc, cJSON *object, const char *name, double value);
void json_bool(json_doc *doc, cJSON *object, const char *name, bool value);
void json_null(json_doc *doc, cJSON *object, const char *name);
cJSON *json_object(json_doc *doc, cJSON *object, const char *name);
cJSON *json_array(json_doc *doc, cJSON *object, const char *name);
/* A new object at the end of `array`. */
cJSON *json_append_object(json_doc *doc, cJSON *array);

/* "host": the machine (host.h). */
void json_add_host(json_doc *doc, cJSON *root, const host_info *host);

/* "runtime_version" and "driver_version" of a backend: null, since the library does
 * not tell them (tp_backend_info has no such fields; tools/README.md). */
void json_add_versions(json_doc *doc, cJSON *object);

#endif /* TPEVENT_TOOL_HAVE_CJSON */

#endif /* TPEVENT_TOOL_JSON_H */
