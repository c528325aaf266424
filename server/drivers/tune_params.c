/* Typed-parameter checks for the tuning setters: see tune_params.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/tune_params.h"

const char *const rv_tune_memory_names[3] = { "hard_limit", "soft_limit", "swap_hard_limit" };
const char *const rv_tune_blkio_names[6] = {
    "weight", "device_weight", "device_read_iops_sec", "device_write_iops_sec",
    "device_read_bytes_sec", "device_write_bytes_sec",
};

const char *const rv_tune_iotune_names[RV_TUNE_IOTUNE_NUMBERS] = {
    "total_bytes_sec", "read_bytes_sec", "write_bytes_sec", "total_iops_sec",
    "read_iops_sec", "write_iops_sec", "total_bytes_sec_max", "read_bytes_sec_max",
    "write_bytes_sec_max", "total_iops_sec_max", "read_iops_sec_max", "write_iops_sec_max",
    "size_iops_sec", "total_bytes_sec_max_length", "read_bytes_sec_max_length",
    "write_bytes_sec_max_length", "total_iops_sec_max_length", "read_iops_sec_max_length",
    "write_iops_sec_max_length",
};

const char *const rv_tune_perf_names[RV_TUNE_PERF_EVENTS] = {
    "cmt", "mbmt", "mbml", "cpu_cycles", "instructions", "cache_references", "cache_misses",
    "branch_instructions", "branch_misses", "bus_cycles", "stalled_cycles_frontend",
    "stalled_cycles_backend", "ref_cpu_cycles", "cpu_clock", "task_clock", "page_faults",
    "context_switches", "cpu_migrations", "page_faults_min", "page_faults_maj",
    "alignment_faults", "emulation_faults",
};

const rv_tune_field rv_tune_bandwidth_fields[RV_TUNE_BANDWIDTH_FIELDS] = {
    { "inbound.average", RV_TYPED_PARAM_UINT }, { "inbound.peak", RV_TYPED_PARAM_UINT },
    { "inbound.burst", RV_TYPED_PARAM_UINT }, { "inbound.floor", RV_TYPED_PARAM_UINT },
    { "outbound.average", RV_TYPED_PARAM_UINT }, { "outbound.peak", RV_TYPED_PARAM_UINT },
    { "outbound.burst", RV_TYPED_PARAM_UINT },
};

void rv_tune_bandwidth_apply(rv_tune_bandwidth *b, const rv_typed_param *p, unsigned int n)
{
    unsigned int val[RV_TUNE_BANDWIDTH_FIELDS] = { 0 };
    bool in_named = false, out_named = false;
    for (unsigned int i = 0; i < n; i++)
        for (int k = 0; k < RV_TUNE_BANDWIDTH_FIELDS; k++)
            if (strcmp(p[i].field, rv_tune_bandwidth_fields[k].name) == 0) {
                val[k] = p[i].value.rv_typed_param_value_u.ui;
                /* only an average or floor makes a direction "specified" */
                in_named |= k == 0 || k == 3;
                out_named |= k == 4;
            }
    bool has_in = val[0] || val[3], has_out = val[4] != 0;
    if (in_named) {
        b->has_in = has_in;
        memcpy(b->val, val, 4 * sizeof(val[0]));
    }
    if (out_named) {
        b->has_out = has_out;
        memcpy(b->val + 4, val + 4, 3 * sizeof(val[0]));
    }
}

enum { FIELD_LENGTH = 80 };     /* libvirt's VIR_TYPED_PARAM_FIELD_LENGTH */

static const char *type_name(int type)
{
    static const char *const names[] = { "", "int", "uint", "llong", "ullong", "double",
                                         "boolean", "string" };
    return type >= 1 && type <= 7 ? names[type] : "unknown";
}

int rv_tune_params_check_call(const rv_typed_param *params, unsigned int n, const char *api,
                              const char *what, rv_err *err)
{
    for (unsigned int i = 0; i < n; i++)
        if (strlen(params[i].field) >= FIELD_LENGTH)
            return rv_err_fail(err, RV_FROM_NONE, RV_ERR_INTERNAL_ERROR,
                               "internal error: parameter %s too big for destination",
                               params[i].field);
    if (n == 0) {
        if (strcmp(what, "nparams") == 0)
            return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                               "nparams in %s must be greater than zero", api);
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "%s in %s must not be NULL", what, api);
    }
    return 0;
}

int rv_tune_check_exclusive(unsigned int flags, rv_err *err)
{
    if ((flags & 1) && (flags & 2))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "Flags 'VIR_DOMAIN_AFFECT_LIVE' and 'VIR_DOMAIN_AFFECT_CONFIG' "
                           "are mutually exclusive");
    return 0;
}

static const rv_typed_param *sort_base;
static int by_field(const void *a, const void *b)
{
    return strcmp(sort_base[*(const unsigned int *)a].field,
                  sort_base[*(const unsigned int *)b].field);
}

int rv_tune_params_validate(const rv_typed_param *params, unsigned int n,
                            const rv_tune_field *fields, size_t nfields, rv_err *err)
{
    unsigned int order[RV_BLOCK_IO_TUNE_PARAMS_MAX];
    if (n > sizeof(order) / sizeof(order[0]))   /* the wire bounds keep n below */
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "too many parameters (%u)", n);
    for (unsigned int i = 0; i < n; i++)
        order[i] = i;
    sort_base = params;
    qsort(order, n, sizeof(order[0]), by_field);
    for (unsigned int k = 0; k < n; k++) {
        const rv_typed_param *p = &params[order[k]];
        const rv_tune_field *f = NULL;
        for (size_t j = 0; j < nfields && !f; j++)
            if (strcmp(fields[j].name, p->field) == 0)
                f = &fields[j];
        if (!f)
            return rv_err_fail(err, RV_FROM_NONE, RV_ERR_ARGUMENT_UNSUPPORTED,
                               "argument unsupported: parameter '%s' not supported", p->field);
        if (p->value.type != f->type)
            return rv_err_fail(err, RV_FROM_NONE, RV_ERR_INVALID_ARG,
                               "invalid argument: invalid type '%s' for parameter '%s', "
                               "expected '%s'", type_name(p->value.type), p->field,
                               type_name(f->type));
        if (k > 0 && strcmp(params[order[k - 1]].field, p->field) == 0)
            return rv_err_fail(err, RV_FROM_NONE, RV_ERR_INVALID_ARG,
                               "invalid argument: parameter '%s' occurs multiple times",
                               p->field);
    }
    return 0;
}

const rv_typed_param *rv_tune_param_find(const rv_typed_param *params, unsigned int n,
                                         const char *name)
{
    for (unsigned int i = 0; i < n; i++)
        if (strcmp(params[i].field, name) == 0)
            return &params[i];
    return NULL;
}

/* ---- bitmaps ---- */

static int parse_num(const char **s, unsigned long *out)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (unsigned long)(*p++ - '0');
        if (v >= RV_TUNE_BITMAP_MAX_BITS)
            return -1;
    }
    *out = v;
    *s = p;
    return 0;
}

static void skip_spaces(const char **s)
{
    while (**s == ' ')
        (*s)++;
}

int rv_tune_bitmap_parse(const char *s, unsigned char **map, size_t *len, rv_err *err)
{
    unsigned char *bits = calloc(RV_TUNE_BITMAP_MAX_BITS / 8, 1);
    const char *p = s;
    unsigned long top = 0;
    int any = 0;
    if (!bits)
        return rv_err_fail(err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    for (;;) {
        int neg = 0;
        unsigned long a, b;
        skip_spaces(&p);
        if (*p == '^') {
            neg = 1;
            p++;
        }
        if (parse_num(&p, &a) < 0)
            goto bad;
        b = a;
        if (!neg && *p == '-') {
            p++;
            if (parse_num(&p, &b) < 0 || b < a)
                goto bad;
        }
        for (unsigned long k = a; k <= b; k++) {
            if (neg)
                bits[k / 8] &= (unsigned char)~(1u << (k % 8));
            else
                bits[k / 8] |= (unsigned char)(1u << (k % 8));
        }
        if (!neg && b + 1 > top)
            top = b + 1;
        any = 1;
        skip_spaces(&p);
        if (*p == '\0')
            break;
        if (*p++ != ',')
            goto bad;
    }
    if (!any)
        goto bad;
    *len = top ? (top + 7) / 8 : 1;
    *map = bits;
    return 0;
bad:
    free(bits);
    return rv_err_fail(err, RV_FROM_NONE, RV_ERR_INVALID_ARG,
                       "invalid argument: Failed to parse bitmap '%s'", s);
}

static int bit_set(const unsigned char *map, size_t k)
{
    return (map[k / 8] >> (k % 8)) & 1;
}

char *rv_tune_bitmap_format(const unsigned char *map, size_t len)
{
    size_t cap = 1, used = 0;
    char *out = NULL;
    /* Room for the worst case: every other bit, "N," each. */
    cap = len * 8 * 8 + 1;
    if (!(out = malloc(cap)))
        return NULL;
    out[0] = '\0';
    for (size_t k = 0; k < len * 8;) {
        if (!bit_set(map, k)) {
            k++;
            continue;
        }
        size_t e = k;
        while (e + 1 < len * 8 && bit_set(map, e + 1))
            e++;
        int w = e == k ? snprintf(out + used, cap - used, "%s%zu", used ? "," : "", k)
                       : snprintf(out + used, cap - used, "%s%zu-%zu", used ? "," : "", k, e);
        used += (size_t)w;
        k = e + 1;
    }
    return out;
}

int rv_tune_bitmap_empty(const unsigned char *map, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (map[i])
            return 0;
    return 1;
}

int rv_tune_bitmap_last(const unsigned char *map, size_t len)
{
    for (size_t k = len * 8; k-- > 0;)
        if (bit_set(map, k))
            return (int)k;
    return -1;
}

int rv_tune_check_nparams(int nparams, int max, rv_err *err)
{
    if (nparams < 0 || nparams > max)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC,
                           nparams < 0 ? "nparams is negative" : "nparams too large");
    return 0;
}

rv_typed_param *rv_tune_param_list(int want, int n, u_int *len, rv_err *err)
{
    int k = want < n ? want : n;
    rv_typed_param *p = calloc((size_t)(k > 0 ? k : 1), sizeof(*p));
    if (!p) {
        rv_err_set(err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    *len = (u_int)(k > 0 ? k : 0);
    return p;
}

int rv_tune_param_name(rv_typed_param *p, const char *field, int type, rv_err *err)
{
    p->value.type = type;
    if (!(p->field = strdup(field)))
        return rv_err_fail(err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

/* ---- a growing list ---- */

void rv_tparam_put(rv_tparam_list *l, const char *field, int type, unsigned long long value,
                   const char *str)
{
    if (l->oom)
        return;
    if (l->n >= RV_TYPED_PARAM_LIST_MAX) {
        l->oom = true;          /* over the protocol's bound: an error, never a cut list */
        return;
    }
    if (l->n == l->cap) {
        u_int cap = l->cap ? l->cap * 2 : 16;
        rv_typed_param *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->oom = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    rv_typed_param *p = &l->v[l->n];
    memset(p, 0, sizeof(*p));
    if (!(p->field = strdup(field))) {
        l->oom = true;
        return;
    }
    p->value.type = type;
    switch (type) {
    case RV_TYPED_PARAM_INT: p->value.rv_typed_param_value_u.i = (int)value; break;
    case RV_TYPED_PARAM_UINT: p->value.rv_typed_param_value_u.ui = (u_int)value; break;
    case RV_TYPED_PARAM_STRING:
        if (!(p->value.rv_typed_param_value_u.s = strdup(str))) {
            free(p->field);
            l->oom = true;
            return;
        }
        break;
    default: p->value.rv_typed_param_value_u.ul = value; break;
    }
    l->n++;
}
