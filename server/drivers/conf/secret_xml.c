/* Secret definitions (secret_xml.h). */
#include "server/drivers/conf/secret_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_SECRET, (code), __VA_ARGS__)

/* Per usage type: its word and the element that names what it is for. */
static const struct {
    const char *word, *element, *label;
} usages[RV_SECRET_USAGE_COUNT] = {
    [RV_SECRET_USAGE_NONE] = { "none", NULL, NULL },
    [RV_SECRET_USAGE_VOLUME] = { "volume", "volume", "volume usage specified, but volume path" },
    [RV_SECRET_USAGE_CEPH] = { "ceph", "name", "Ceph usage specified, but name" },
    [RV_SECRET_USAGE_ISCSI] = { "iscsi", "target", "iSCSI usage specified, but target" },
    [RV_SECRET_USAGE_TLS] = { "tls", "name", "TLS usage specified, but name" },
    [RV_SECRET_USAGE_VTPM] = { "vtpm", "name", "vTPM usage specified, but name" },
};

const char *rv_secret_usage_word(int type)
{
    return usages[type].word;
}

void rv_secret_def_clear(rv_secret_def *def)
{
    free(def->usage_id);
    free(def->description);
    memset(def, 0, sizeof(*def));
}

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* A yes/no attribute; absent is no. */
static int yes_no(xmlNode *root, const char *name, bool *out, rv_err *err)
{
    int failed = 0;
    char *v = rv_lx_attr(root, name, &failed);
    int rc = 0;
    if (failed)
        rc = oom(err);
    else if (!v || strcmp(v, "no") == 0)
        *out = false;
    else if (strcmp(v, "yes") == 0)
        *out = true;
    else
        rc = fail(err, RV_ERR_XML_ERROR, "XML error: invalid value of '%s'", name);
    free(v);
    return rc;
}

static int parse_usage(xmlNode *usage, rv_secret_def *def, rv_err *err)
{
    int failed = 0, rc = -1;
    char *type = rv_lx_attr(usage, "type", &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    int t = 1;
    while (t < RV_SECRET_USAGE_COUNT && (!type || strcmp(usages[t].word, type) != 0))
        t++;
    if (t == RV_SECRET_USAGE_COUNT) {
        fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: unknown secret usage type %s",
             type ? type : "(null)");
        goto out;
    }
    def->usage_type = t;
    free(def->usage_id);
    def->usage_id = rv_lx_text(rv_lx_child(usage, usages[t].element), &failed);
    if (!def->usage_id) {
        if (failed)
            oom(err);
        else
            fail(err, RV_ERR_INTERNAL_ERROR, "internal error: %s is missing", usages[t].label);
        goto out;
    }
    rc = 0;
out:
    free(type);
    return rc;
}

int rv_secret_def_parse(const char *xml, rv_secret_def *def, rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0, rc = -1;
    memset(def, 0, sizeof(*def));
    xmlNode *root = rv_lx_read(xml, RV_SECRET_XML_MAX, "secret", "definition_of_secret",
                               RV_FROM_SECRET, &doc, err);
    if (!root || yes_no(root, "ephemeral", &def->ephemeral, err) < 0 ||
        yes_no(root, "private", &def->is_private, err) < 0)
        goto out;
    char *uuid = rv_lx_text(rv_lx_child(root, "uuid"), &failed);
    if (uuid && rv_uuid_parse(uuid, def->uuid) < 0) {
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: malformed uuid element");
        free(uuid);
        goto out;
    }
    if (!uuid && !failed)
        rv_uuid_generate(def->uuid);
    free(uuid);
    def->description = rv_lx_text(rv_lx_child(root, "description"), &failed);
    xmlNode *usage = rv_lx_child(root, "usage");
    if (failed) {
        oom(err);
        goto out;
    }
    if (usage ? parse_usage(usage, def, err) < 0 : !(def->usage_id = strdup("")) && oom(err))
        goto out;
    rc = 0;
out:
    rv_lx_free(doc);
    if (rc < 0)
        rv_secret_def_clear(def);
    return rc;
}

char *rv_secret_def_format(const rv_secret_def *def)
{
    char uuid[RV_UUID_STRING_LEN], *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    rv_uuid_format(def->uuid, uuid);
    fprintf(fp, "<secret ephemeral='%s' private='%s'>\n  <uuid>%s</uuid>\n",
            def->ephemeral ? "yes" : "no", def->is_private ? "yes" : "no", uuid);
    if (def->description)
        rv_xml_put_text_element(fp, 2, "description", def->description);
    if (def->usage_type != RV_SECRET_USAGE_NONE) {
        fprintf(fp, "  <usage type='%s'>\n", usages[def->usage_type].word);
        rv_xml_put_text_element(fp, 4, usages[def->usage_type].element, def->usage_id);
        fputs("  </usage>\n", fp);
    }
    fputs("</secret>\n", fp);
    return rv_xml_done(fp, &buf);
}
