#include "json.h"

#include <stdlib.h>

#include "tool.h"

int tool_json_unavailable(const char *command)
{
    fprintf(stderr,
            "tpevent %s: --json is not available in this build: the tool was built without "
            "cJSON (Debian/Ubuntu: apt-get install libcjson-dev, then configure again)\n",
            command);
    return TOOL_EXIT_USAGE;
}

#if TPEVENT_TOOL_HAVE_CJSON

static cJSON *checked(json_doc *doc, cJSON *item)
{
    if (item == NULL)
        doc->failed = true;
    return item;
}

cJSON *json_begin(json_doc *doc)
{
    doc->root = cJSON_CreateObject();
    doc->failed = doc->root == NULL;
    return doc->root;
}

bool json_end(json_doc *doc, FILE *out)
{
    char *text = doc->failed ? NULL : cJSON_PrintUnformatted(doc->root);
    cJSON_Delete(doc->root);
    doc->root = NULL;
    if (text == NULL)
        return false;
    fputs(text, out);
    fputc('\n', out);
    cJSON_free(text);
    return true;
}

void json_string(json_doc *doc, cJSON *object, const char *name, const char *value)
{
    checked(doc, value != NULL ? cJSON_AddStringToObject(object, name, value) : cJSON_AddNullToObject(object, name));
}

void json_number(json_doc *doc, cJSON *object, const char *name, double value)
{
    checked(doc, cJSON_AddNumberToObject(object, name, value));
}

void json_bool(json_doc *doc, cJSON *object, const char *name, bool value)
{
    checked(doc, cJSON_AddBoolToObject(object, name, value));
}

void json_null(json_doc *doc, cJSON *object, const char *name)
{
    checked(doc, cJSON_AddNullToObject(object, name));
}

cJSON *json_object(json_doc *doc, cJSON *object, const char *name)
{
    return checked(doc, cJSON_AddObjectToObject(object, name));
}

cJSON *json_array(json_doc *doc, cJSON *object, const char *name)
{
    return checked(doc, cJSON_AddArrayToObject(object, name));
}

cJSON *json_append_object(json_doc *doc, cJSON *array)
{
    cJSON *object = checked(doc, cJSON_CreateObject());
    if (object != NULL && !cJSON_AddItemToArray(array, object)) {
        cJSON_Delete(object);
        doc->failed = true;
        return NULL;
    }
    return object;
}

static const char *or_null(const char *text)
{
    return text[0] != '\0' ? text : NULL;
}

void json_add_host(json_doc *doc, cJSON *root, const host_info *host)
{
    cJSON *object = json_object(doc, root, "host");
    json_string(doc, object, "system", or_null(host->system));
    json_string(doc, object, "release", or_null(host->release));
    json_string(doc, object, "machine", or_null(host->machine));
    json_string(doc, object, "libc", or_null(host->libc));
    json_string(doc, object, "cpu", or_null(host->cpu));
    if (host->clock_resolution_ns >= 0)
        json_number(doc, object, "clock_resolution_ns", (double)host->clock_resolution_ns);
    else
        json_null(doc, object, "clock_resolution_ns");
}

void json_add_versions(json_doc *doc, cJSON *object)
{
    json_null(doc, object, "runtime_version");
    json_null(doc, object, "driver_version");
}

#endif /* TPEVENT_TOOL_HAVE_CJSON */
