/* The CPUID reader (server/drivers/qemu/cpuid.c):
 *   - every bit of its table against libvirt's own map of CPUID bits
 *     (/usr/share/libvirt/cpu_map/x86_features.xml, skipped with 77 when
 *     libvirt is not installed): a feature libvirt names is at the same
 *     leaf, subleaf, register and bit, and no bit is named otherwise
 *     there (QEMU's spelling mapped to libvirt's by cpu_names.c);
 *   - on x86, this CPU: the signature the kernel shows in /proc/cpuinfo
 *     (the kernel computes it from the same leaf), a vendor, and the
 *     features every x86_64 CPU has. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "server/drivers/qemu/cpu_names.h"
#include "server/drivers/qemu/cpuid.h"
#include "tests/unit/check.h"

#define FEATURES_XML "/usr/share/libvirt/cpu_map/x86_features.xml"

typedef struct libvirt_bit {
    char name[64];
    unsigned leaf, subleaf;
    char reg;
    unsigned bit;
} libvirt_bit;

static unsigned hex_attr(xmlNode *n, const char *attr, bool *present)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    unsigned r = v ? (unsigned)strtoul((const char *)v, NULL, 16) : 0;
    if (present)
        *present = v != NULL;
    xmlFree(v);
    return r;
}

/* libvirt's single-bit CPUID features, into bits; their number. */
static size_t read_libvirt(xmlDoc *doc, libvirt_bit *bits, size_t max)
{
    size_t n = 0;
    for (xmlNode *f = xmlDocGetRootElement(doc)->children; f; f = f->next) {
        if (f->type != XML_ELEMENT_NODE || strcmp((const char *)f->name, "feature") != 0)
            continue;
        for (xmlNode *c = f->children; c; c = c->next) {
            if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "cpuid") != 0)
                continue;
            CHECK(n < max);
            libvirt_bit *b = &bits[n];
            xmlChar *name = xmlGetProp(f, (const xmlChar *)"name");
            snprintf(b->name, sizeof(b->name), "%s", (const char *)name);
            xmlFree(name);
            b->leaf = hex_attr(c, "eax_in", NULL);
            b->subleaf = hex_attr(c, "ecx_in", NULL);
            for (const char *r = "abcd"; *r; r++) {
                char attr[] = { 'e', *r, 'x', '\0' };
                bool present;
                unsigned mask = hex_attr(c, attr, &present);
                if (present && mask && (mask & (mask - 1)) == 0) {
                    b->reg = *r;
                    b->bit = (unsigned)__builtin_ctz(mask);
                }
            }
            if (b->reg)
                n++;
        }
    }
    return n;
}

static void check_table_against_libvirt(void)
{
    xmlDoc *doc = xmlReadFile(FEATURES_XML, NULL, XML_PARSE_NONET);
    CHECK(doc != NULL);
    static libvirt_bit bits[1024];
    size_t nbits = read_libvirt(doc, bits, sizeof(bits) / sizeof(bits[0]));
    xmlFreeDoc(doc);
    CHECK(nbits > 150);

    const char *name;
    unsigned leaf, subleaf, bit, same = 0;
    char reg;
    for (size_t i = 0; rv_cpuid_table_entry(i, &name, &leaf, &subleaf, &reg, &bit); i++) {
        const char *lv = rv_cpu_libvirt_name(name);
        for (size_t j = 0; j < nbits; j++) {
            const libvirt_bit *b = &bits[j];
            bool at = b->leaf == leaf && b->subleaf == subleaf && b->reg == reg && b->bit == bit;
            if (strcmp(b->name, lv) == 0 && !at)
                check_fail(__FILE__, __LINE__, "%s: ours at %#x.%u e%cx bit %u, libvirt's at %#x.%u e%cx bit %u",
                           name, leaf, subleaf, reg, bit, b->leaf, b->subleaf, b->reg, b->bit);
            if (at && strcmp(b->name, lv) != 0)
                check_fail(__FILE__, __LINE__, "%#x.%u e%cx bit %u: ours is %s, libvirt's %s", leaf,
                           subleaf, reg, bit, lv, b->name);
            same += at;
        }
    }
    /* Most of libvirt's are ours too (the rest: MSRs, leaves QEMU lacks). */
    printf("ok   %u of our table's bits are libvirt's, named alike\n", same);
    CHECK(same > 150);
}

/* /proc/cpuinfo's first value of field, as a number (-1: none). */
static long cpuinfo_number(const char *field)
{
    FILE *fp = fopen("/proc/cpuinfo", "re");
    char line[512];
    long v = -1;
    size_t len = strlen(field);
    while (fp && v < 0 && fgets(line, sizeof(line), fp))
        if (strncmp(line, field, len) == 0 && (line[len] == '\t' || line[len] == ' '))
            v = strtol(strchr(line, ':') + 1, NULL, 10);
    if (fp)
        fclose(fp);
    return v;
}

static void check_this_cpu(void)
{
    rv_cpuid_host id;
    const char *names[512];
    size_t n = rv_cpuid_features(names, 512);
#if defined(__x86_64__) || defined(__i386__)
    CHECK(rv_cpuid_host_read(&id));
    CHECK(strlen(id.vendor) == 12);
    CHECK_INT_EQ(id.family, cpuinfo_number("cpu family"));
    CHECK_INT_EQ(id.model, cpuinfo_number("model"));
    CHECK_INT_EQ(id.stepping, cpuinfo_number("stepping"));
    const char *base[] = { "fpu", "tsc", "cx8", "cmov", "mmx", "sse", "sse2", "syscall", "nx", "lm" };
    for (size_t b = 0; b < sizeof(base) / sizeof(base[0]); b++) {
        size_t i = 0;
        while (i < n && strcmp(names[i], base[b]) != 0)
            i++;
        if (i == n)
            check_fail(__FILE__, __LINE__, "this x86 CPU has no %s", base[b]);
    }
    printf("ok   this CPU: %s family %u model %u stepping %u, %zu features\n", id.vendor, id.family,
           id.model, id.stepping, n);
#else
    CHECK(!rv_cpuid_host_read(&id));
    CHECK_UINT_EQ(n, 0);
#endif
}

int main(void)
{
    check_this_cpu();
    FILE *fp = fopen(FEATURES_XML, "r");
    if (!fp) {
        printf("skip %s is not here (libvirt's cpu map)\n", FEATURES_XML);
        return CHECK_SKIP;
    }
    fclose(fp);
    check_table_against_libvirt();
    return 0;
}
