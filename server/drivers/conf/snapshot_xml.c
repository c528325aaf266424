/* Domain snapshot XML (see snapshot_xml.h). */
#include "server/drivers/conf/snapshot_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

static int oom(rv_err *err, int from)
{
    rv_err_set(err, from, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

void rv_snapshot_request_clear(rv_snapshot_request *req)
{
    free(req->name);
    free(req->description);
    free(req->memory);
    for (size_t i = 0; i < req->ndisks; i++) {
        free(req->disks[i].name);
        free(req->disks[i].snapshot);
        free(req->disks[i].file);
        free(req->disks[i].bitmap);
    }
    free(req->disks);
    memset(req, 0, sizeof(*req));
}

/* The <disk>s under <disks>: mode_attr names their mode (snapshot or
 * checkpoint). */
static int parse_disks(const xmlNode *disks, const char *mode_attr, rv_snapshot_request *req,
                       int *failed)
{
    size_t n = 0;
    for (const xmlNode *c = disks ? disks->children : NULL; c; c = c->next)
        n += c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "disk") == 0;
    if (!n)
        return 0;
    if (!(req->disks = calloc(n, sizeof(*req->disks))))
        return -1;
    for (const xmlNode *c = disks->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "disk") != 0)
            continue;
        rv_snapshot_disk *d = &req->disks[req->ndisks++];
        d->name = rv_lx_attr(c, "name", failed);
        d->snapshot = rv_lx_attr(c, mode_attr, failed);
        d->file = rv_lx_attr(rv_lx_child(c, "source"), "file", failed);
        d->bitmap = rv_lx_attr(c, "bitmap", failed);
    }
    return *failed ? -1 : 0;
}

int rv_snapshot_request_parse(const char *xml, rv_snapshot_request *out, rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0;
    memset(out, 0, sizeof(*out));
    xmlNode *root = rv_lx_read(xml, RV_SNAPSHOT_XML_MAX, "domainsnapshot", "domain_snapshot",
                               RV_FROM_DOMAIN_SNAPSHOT, &doc, err);
    if (!root) {
        xmlFreeDoc(doc);
        return -1;
    }
    out->name = rv_lx_text(rv_lx_child(root, "name"), &failed);
    out->description = rv_lx_text(rv_lx_child(root, "description"), &failed);
    out->memory = rv_lx_attr(rv_lx_child(root, "memory"), "snapshot", &failed);
    out->has_state = rv_lx_child(root, "state") != NULL;
    out->has_creation_time = rv_lx_child(root, "creationTime") != NULL;
    if (!failed)
        parse_disks(rv_lx_child(root, "disks"), "snapshot", out, &failed);
    xmlFreeDoc(doc);
    if (failed) {
        rv_snapshot_request_clear(out);
        return oom(err, RV_FROM_DOMAIN_SNAPSHOT);
    }
    return 0;
}

int rv_checkpoint_request_parse(const char *xml, rv_snapshot_request *out, rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0;
    memset(out, 0, sizeof(*out));
    xmlNode *root = rv_lx_read(xml, RV_SNAPSHOT_XML_MAX, "domaincheckpoint", "domain_checkpoint",
                               RV_FROM_DOMAIN_CHECKPOINT, &doc, err);
    if (!root) {
        xmlFreeDoc(doc);
        return -1;
    }
    out->name = rv_lx_text(rv_lx_child(root, "name"), &failed);
    out->description = rv_lx_text(rv_lx_child(root, "description"), &failed);
    out->has_creation_time = rv_lx_child(root, "creationTime") != NULL;
    if (!failed)
        parse_disks(rv_lx_child(root, "disks"), "checkpoint", out, &failed);
    xmlFreeDoc(doc);
    if (failed) {
        rv_snapshot_request_clear(out);
        return oom(err, RV_FROM_DOMAIN_CHECKPOINT);
    }
    return 0;
}

static void element(FILE *fp, const char *indent, const char *name, const char *value)
{
    fprintf(fp, "%s<%s>", indent, name);
    rv_xml_put_escaped(fp, value);
    fprintf(fp, "</%s>\n", name);
}

/* text with every line indented by two more spaces. */
static void put_indented(FILE *fp, const char *text)
{
    while (*text) {
        size_t n = strcspn(text, "\n");
        if (n)
            fputs("  ", fp);
        fwrite(text, 1, n, fp);
        fputc('\n', fp);
        text += n;
        if (*text == '\n')
            text++;
    }
}

/* <parent><name>...</name></parent> when there is one. */
static void put_parent(FILE *fp, const char *parent)
{
    if (!parent)
        return;
    fputs("  <parent>\n", fp);
    element(fp, "    ", "name", parent);
    fputs("  </parent>\n", fp);
}

char *rv_snapshot_format(const rv_snapshot_view *v)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    fputs("<domainsnapshot>\n", fp);
    element(fp, "  ", "name", v->name);
    if (v->description)
        element(fp, "  ", "description", v->description);
    element(fp, "  ", "state", v->state);
    put_parent(fp, v->parent);
    fprintf(fp, "  <creationTime>%lld</creationTime>\n", v->creation_time);
    fprintf(fp, "  <memory snapshot='%s'/>\n", v->memory);
    if (v->ndisks) {
        fputs("  <disks>\n", fp);
        for (size_t i = 0; i < v->ndisks; i++) {
            fputs("    <disk name='", fp);
            rv_xml_put_escaped(fp, v->disks[i].name);
            fprintf(fp, "' snapshot='%s'/>\n", v->disks[i].snapshot);
        }
        fputs("  </disks>\n", fp);
    }
    if (v->domain_xml)
        put_indented(fp, v->domain_xml);
    fputs("</domainsnapshot>\n", fp);
    return rv_xml_done(fp, &buf);
}

char *rv_checkpoint_format(const rv_checkpoint_view *v)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    fputs("<domaincheckpoint>\n", fp);
    element(fp, "  ", "name", v->name);
    if (v->description)
        element(fp, "  ", "description", v->description);
    put_parent(fp, v->parent);
    fprintf(fp, "  <creationTime>%lld</creationTime>\n", v->creation_time);
    if (v->ndisks) {
        fputs("  <disks>\n", fp);
        for (size_t i = 0; i < v->ndisks; i++) {
            const rv_snapshot_disk *d = &v->disks[i];
            int bitmap = strcmp(d->snapshot, "bitmap") == 0;
            fputs("    <disk name='", fp);
            rv_xml_put_escaped(fp, d->name);
            fprintf(fp, "' checkpoint='%s'", d->snapshot);
            if (bitmap && d->bitmap) {
                fputs(" bitmap='", fp);
                rv_xml_put_escaped(fp, d->bitmap);
                fputc('\'', fp);
            }
            if (bitmap && v->sizes)
                fprintf(fp, " size='%llu'", v->sizes[i]);
            fputs("/>\n", fp);
        }
        fputs("  </disks>\n", fp);
    }
    if (v->domain_xml)
        put_indented(fp, v->domain_xml);
    fputs("</domaincheckpoint>\n", fp);
    return rv_xml_done(fp, &buf);
}
