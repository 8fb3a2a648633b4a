/* OTLP logs as protobuf (ExportLogsServiceRequest) -> one event per log record, as JSON, read straight off the wire.

   app/shippers/otlp/protobuf.py builds the same events from upb's messages, which costs a Python object per
   message and per attribute (about 2 µs an attribute). This reads the bytes once to check that it can read
   them exactly as upb would (`check_*`: wire types, no singular field or oneof member given twice, valid UTF-8,
   nesting well within upb's limit, no event time that protobuf.py would write as text), then writes the events
   in slices as the caller asks (`Reader.take`), each as the JSON of the dict protobuf.py builds. A body it
   cannot read exactly is left to upb: `Reader(data)` raises ValueError, and protobuf.py decodes it itself. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 48 /* messages deep; upb refuses past 100 */
#define NS_BY_MAGNITUDE 100000000000000000ULL /* app/shippers/common.py: from here up, whole microseconds */

typedef struct { const uint8_t *p, *end; } Buf;
typedef struct { uint32_t num; int wt; uint64_t v; Buf data; } Field;

/* 1: a field read into f; 0: the end; -1: bytes this reader does not take (upb decides). */
static int next_field(Buf *b, Field *f) {
    uint64_t key = 0, v = 0;
    int shift;
    if (b->p >= b->end) return 0;
    for (shift = 0;; shift += 7) {
        if (b->p >= b->end || shift > 63) return -1;
        uint8_t c = *b->p++;
        key |= (uint64_t)(c & 0x7f) << shift;
        if (c < 0x80) break;
    }
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    if (f->num == 0 || (key >> 3) > 0x1fffffff) return -1;
    switch (f->wt) {
    case 0:
    case 2:
        for (shift = 0;; shift += 7) {
            if (b->p >= b->end || shift > 63) return -1;
            uint8_t c = *b->p++;
            if (shift == 63 && c > 1) return -1;
            v |= (uint64_t)(c & 0x7f) << shift;
            if (c < 0x80) break;
        }
        if (f->wt == 2) {
            if (v > (uint64_t)(b->end - b->p)) return -1;
            f->data.p = b->p;
            f->data.end = b->p + v;
            b->p += v;
        }
        f->v = v;
        return 1;
    case 1:
        if (b->end - b->p < 8) return -1;
        memcpy(&v, b->p, 8); /* little-endian machines only: checked at import */
        b->p += 8;
        f->v = v;
        return 1;
    case 5: {
        uint32_t u;
        if (b->end - b->p < 4) return -1;
        memcpy(&u, b->p, 4);
        b->p += 4;
        f->v = u;
        return 1;
    }
    default:
        return -1;
    }
}

static int valid_utf8(Buf s) {
    const uint8_t *p = s.p;
    while (p < s.end) {
        uint8_t c = *p;
        if (c < 0x80) { p++; continue; }
        int n;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; }
        else return 0;
        if (s.end - p <= n) return 0;
        for (int i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        p += n + 1;
    }
    return 1;
}

/* ---- the check: 0 when the bytes read exactly, -1 otherwise ------------------------------------------------ */

/* The field numbers a message knows, their wire types, which are strings (UTF-8), which are singular. */
typedef struct { uint32_t num; int wt; int string; int singular; int (*sub)(Buf, int); } Known;

/* `oneof`: the known fields are the members of a oneof, of which one at most may be given. */
static int check_fields(Buf b, int depth, const Known *known, int n_known, int oneof) {
    Field f;
    int rc;
    uint64_t seen = 0;
    if (depth > MAX_DEPTH) return -1;
    while ((rc = next_field(&b, &f)) == 1) {
        for (int i = 0; i < n_known; i++) {
            if (known[i].num != f.num) continue;
            if (known[i].wt != f.wt) return -1;
            if (oneof && seen) return -1;
            if (known[i].singular) {
                if (seen & (1ULL << i)) return -1;
                seen |= 1ULL << i;
            }
            if (known[i].string && !valid_utf8(f.data)) return -1;
            if (known[i].sub && known[i].sub(f.data, depth + 1) < 0) return -1;
            break;
        }
    }
    return rc;
}

static int check_message(Buf b, int depth, const Known *known, int n_known) {
    return check_fields(b, depth, known, n_known, 0);
}

static int check_any(Buf b, int depth);
static int check_kv(Buf b, int depth);
static int check_array(Buf b, int depth) {
    static const Known k[] = {{1, 2, 0, 0, check_any}};
    return check_message(b, depth, k, 1);
}
static int check_kvlist(Buf b, int depth) {
    static const Known k[] = {{1, 2, 0, 0, check_kv}};
    return check_message(b, depth, k, 1);
}
static int check_any(Buf b, int depth) {
    /* A oneof: one member at most (upb keeps the last of several; this reader does not guess). */
    static const Known k[] = {{1, 2, 1, 1, NULL}, {2, 0, 0, 1, NULL}, {3, 0, 0, 1, NULL}, {4, 1, 0, 1, NULL},
                              {5, 2, 0, 1, check_array}, {6, 2, 0, 1, check_kvlist}, {7, 2, 0, 1, NULL}};
    return check_fields(b, depth, k, 7, 1);
}
static int check_kv(Buf b, int depth) {
    static const Known k[] = {{1, 2, 1, 1, NULL}, {2, 2, 0, 1, check_any}};
    return check_message(b, depth, k, 2);
}
static int check_record(Buf b, int depth) {
    static const Known k[] = {{1, 1, 0, 1, NULL}, {11, 1, 0, 1, NULL}, {2, 0, 0, 1, NULL}, {3, 2, 1, 1, NULL},
                              {5, 2, 0, 1, check_any}, {6, 2, 0, 0, check_kv}, {7, 0, 0, 1, NULL},
                              {8, 5, 0, 1, NULL}, {9, 2, 0, 1, NULL}, {10, 2, 0, 1, NULL}, {12, 2, 1, 1, NULL}};
    if (check_message(b, depth, k, 11) < 0) return -1;
    /* The event time: a number from 1973-03-03 on; earlier ones protobuf.py writes as RFC 3339 text. */
    Field f;
    uint64_t time = 0, observed = 0;
    while (next_field(&b, &f) == 1) {
        if (f.num == 1) time = f.v;
        if (f.num == 11) observed = f.v;
    }
    uint64_t t = time ? time : observed;
    return (t != 0 && t < NS_BY_MAGNITUDE) ? -1 : 0;
}
static int check_scope(Buf b, int depth) {
    static const Known k[] = {{1, 2, 1, 1, NULL}, {2, 2, 1, 1, NULL}, {3, 2, 0, 0, check_kv}, {4, 0, 0, 1, NULL}};
    return check_message(b, depth, k, 4);
}
static int check_scope_logs(Buf b, int depth) {
    static const Known k[] = {{1, 2, 0, 1, check_scope}, {2, 2, 0, 0, check_record}, {3, 2, 1, 1, NULL}};
    return check_message(b, depth, k, 3);
}
static int check_resource(Buf b, int depth) {
    static const Known k[] = {{1, 2, 0, 0, check_kv}, {2, 0, 0, 1, NULL}};
    return check_message(b, depth, k, 2);
}
static int check_resource_logs(Buf b, int depth) {
    static const Known k[] = {{1, 2, 0, 1, check_resource}, {2, 2, 0, 0, check_scope_logs}, {3, 2, 1, 1, NULL}};
    return check_message(b, depth, k, 3);
}
static int check_request(Buf b) {
    static const Known k[] = {{1, 2, 0, 0, check_resource_logs}};
    return check_message(b, 1, k, 1);
}

/* ---- writing each event as JSON (the bytes are known good: only memory can fail) -------------------------- */

/* The event is written as JSON text rather than built as a dict: the row builder reads JSON (its compiled path),
   and a dict would be encoded only to be read again. Keys repeated in the text (a map body's key that the record
   sets too) mean what they mean in the dict protobuf.py builds: the first place, the last value, as JSON objects
   are read into dicts. Numbers are written as Python writes them; the row builder stores them canonically. */

typedef struct { char *data; Py_ssize_t len, cap; } Out;

static int put(Out *o, const void *s, Py_ssize_t n) {
    if (o->len + n > o->cap) {
        Py_ssize_t cap = o->cap ? o->cap : 512;
        while (cap < o->len + n) cap *= 2;
        char *data = PyMem_Realloc(o->data, cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->data = data;
        o->cap = cap;
    }
    memcpy(o->data + o->len, s, n);
    o->len += n;
    return 0;
}
#define PUTS(o, s) put((o), (s), (Py_ssize_t)strlen(s))

/* A JSON string's inside (no quotes): `"`, `\` and control characters escaped; the rest is valid UTF-8 as it is. */
static int put_escaped(Out *o, Buf s) {
    const uint8_t *run = s.p;
    for (const uint8_t *p = s.p; p < s.end; p++) {
        uint8_t c = *p;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (put(o, run, p - run) < 0) return -1;
        char esc[8];
        switch (c) {
        case '"': memcpy(esc, "\\\"", 3); break;
        case '\\': memcpy(esc, "\\\\", 3); break;
        case '\n': memcpy(esc, "\\n", 3); break;
        case '\r': memcpy(esc, "\\r", 3); break;
        case '\t': memcpy(esc, "\\t", 3); break;
        default: snprintf(esc, sizeof esc, "\\u%04x", c);
        }
        if (PUTS(o, esc) < 0) return -1;
        run = p + 1;
    }
    return put(o, run, s.end - run);
}

/* A decimal integer (snprintf costs more than the rest of a small value). */
static int put_int(Out *o, int64_t v) {
    char digits[24];
    int i = sizeof digits;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) digits[--i] = '-';
    return put(o, digits + i, (Py_ssize_t)sizeof digits - i);
}

static int put_string(Out *o, Buf s) {
    return put(o, "\"", 1) < 0 || put_escaped(o, s) < 0 || put(o, "\"", 1) < 0 ? -1 : 0;
}

/* `,"<prefix><key>":` (the comma unless first). */
static int put_key(Out *o, int *first, const char *prefix, Buf key) {
    if (!*first && put(o, ",", 1) < 0) return -1;
    *first = 0;
    return put(o, "\"", 1) < 0 || PUTS(o, prefix) < 0 || put_escaped(o, key) < 0 || put(o, "\":", 2) < 0 ? -1 : 0;
}

static int put_hex(Out *o, Buf s) {
    static const char digits[] = "0123456789abcdef";
    if (put(o, "\"", 1) < 0) return -1;
    for (const uint8_t *p = s.p; p < s.end; p++) {
        char pair[2] = {digits[*p >> 4], digits[*p & 15]};
        if (put(o, pair, 2) < 0) return -1;
    }
    return put(o, "\"", 1);
}

static int put_base64(Out *o, Buf s) {
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    Py_ssize_t n = s.end - s.p, i = 0;
    if (put(o, "\"", 1) < 0) return -1;
    for (; i + 2 < n; i += 3) {
        uint32_t v = ((uint32_t)s.p[i] << 16) | ((uint32_t)s.p[i + 1] << 8) | s.p[i + 2];
        char quad[4] = {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], table[v & 63]};
        if (put(o, quad, 4) < 0) return -1;
    }
    if (i < n) {
        uint32_t v = (uint32_t)s.p[i] << 16 | (i + 1 < n ? (uint32_t)s.p[i + 1] << 8 : 0);
        char quad[4] = {table[v >> 18], table[(v >> 12) & 63], i + 1 < n ? table[(v >> 6) & 63] : '=', '='};
        if (put(o, quad, 4) < 0) return -1;
    }
    return put(o, "\"", 1);
}

static int put_double(Out *o, double d) {
    if (!isfinite(d)) return put(o, "null", 4); /* as msgspec writes NaN and the infinities */
    char *text = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL); /* a float reads back as one */
    if (text == NULL) return -1;
    int rc = PUTS(o, text);
    PyMem_Free(text);
    return rc;
}

static int put_kv_pairs(Out *o, int *first, const char *prefix, Buf kvlist_or_holder, uint32_t field);

/* An AnyValue as JSON (none set: null). */
static int put_any(Out *o, Buf b) {
    Field f;
    while (next_field(&b, &f) == 1) {
        switch (f.num) {
        case 1: return put_string(o, f.data);
        case 2: return f.v ? put(o, "true", 4) : put(o, "false", 5);
        case 3:
            return put_int(o, (int64_t)f.v);
        case 4: {
            double d;
            memcpy(&d, &f.v, 8);
            return put_double(o, d);
        }
        case 5: {
            Field g;
            Buf items = f.data;
            int first = 1;
            if (put(o, "[", 1) < 0) return -1;
            while (next_field(&items, &g) == 1) {
                if (g.num != 1) continue;
                if ((!first && put(o, ",", 1) < 0) || put_any(o, g.data) < 0) return -1;
                first = 0;
            }
            return put(o, "]", 1);
        }
        case 6: {
            int first = 1;
            return put(o, "{", 1) < 0 || put_kv_pairs(o, &first, "", f.data, 1) < 0 || put(o, "}", 1) < 0 ? -1 : 0;
        }
        case 7: return put_base64(o, f.data);
        }
    }
    return put(o, "null", 4);
}

/* One KeyValue as `"<prefix><key>":<value>`. */
static int put_kv(Out *o, int *first, const char *prefix, Buf b) {
    Field f;
    Buf key = {b.p, b.p}, value = {NULL, NULL};
    while (next_field(&b, &f) == 1) {
        if (f.num == 1) key = f.data;
        else if (f.num == 2) value = f.data;
    }
    if (put_key(o, first, prefix, key) < 0) return -1;
    return value.p == NULL ? put(o, "null", 4) : put_any(o, value);
}

/* Every KeyValue of a message (its fields numbered `field`) as pairs of the object being written. */
static int put_kv_pairs(Out *o, int *first, const char *prefix, Buf b, uint32_t field) {
    Field f;
    while (next_field(&b, &f) == 1)
        if (f.num == field && put_kv(o, first, prefix, f.data) < 0) return -1;
    return 0;
}

/* The AnyValue's one member (0: none; 6: a map). */
static uint32_t any_kind(Buf b, Buf *member) {
    Field f;
    while (next_field(&b, &f) == 1)
        if (f.num >= 1 && f.num <= 7) {
            *member = f.data;
            return f.num;
        }
    return 0;
}

/* One log record's event, the keys in the order protobuf.py's _event sets them, then `context` (pairs, written). */
static int put_record(Out *o, Buf b, const Out *context) {
    Field f;
    Buf body = {NULL, NULL}, severity_text = {NULL, NULL}, trace = {NULL, NULL}, span = {NULL, NULL};
    Buf event_name = {NULL, NULL};
    uint64_t time = 0, observed = 0, severity = 0, flags = 0;
    Buf scan = b;
    int first = 1;
    while (next_field(&scan, &f) == 1) {
        switch (f.num) {
        case 1: time = f.v; break;
        case 11: observed = f.v; break;
        case 2: severity = f.v; break;
        case 3: severity_text = f.data; break;
        case 5: body = f.data; break;
        case 8: flags = f.v; break;
        case 9: trace = f.data; break;
        case 10: span = f.data; break;
        case 12: event_name = f.data; break;
        }
    }
    if (put(o, "{", 1) < 0) return -1;
    if (body.p != NULL) {
        Buf member = {NULL, NULL};
        uint32_t kind = any_kind(body, &member);
        if (kind == 6) { /* a map: its pairs are the event's own fields */
            if (put_kv_pairs(o, &first, "", member, 1) < 0) return -1;
        } else if (kind != 0) {
            static const Buf message = {(const uint8_t *)"message", (const uint8_t *)"message" + 7};
            if (put_key(o, &first, "", message) < 0 || put_any(o, body) < 0) return -1;
        }
    }
    uint64_t t = time ? time : observed;
#define KEY(name) put_key(o, &first, "", (Buf){(const uint8_t *)name, (const uint8_t *)name + sizeof(name) - 1})
    if (t) { /* common.py's ns_time: whole microseconds (t is from 1973 on: checked) */
        if (KEY("_time") < 0 || put_int(o, (int64_t)(t / 1000)) < 0) return -1; /* below 2^64 / 1000 */
    }
    if (severity_text.p != severity_text.end && (KEY("severity_text") < 0 || put_string(o, severity_text) < 0))
        return -1;
    if ((int32_t)severity) {
        if (KEY("severity_number") < 0 || put_int(o, (int32_t)severity) < 0) return -1;
    }
    if (trace.p != trace.end && (KEY("trace_id") < 0 || put_hex(o, trace) < 0)) return -1;
    if (span.p != span.end && (KEY("span_id") < 0 || put_hex(o, span) < 0)) return -1;
    if (flags) {
        if (KEY("flags") < 0 || put_int(o, (int64_t)flags) < 0) return -1;
    }
    if (event_name.p != event_name.end && (KEY("event_name") < 0 || put_string(o, event_name) < 0)) return -1;
#undef KEY
    if (put_kv_pairs(o, &first, "attributes.", b, 6) < 0) return -1;
    if (context->len) {
        if (!first && put(o, ",", 1) < 0) return -1;
        if (put(o, context->data, context->len) < 0) return -1;
    }
    return put(o, "}", 1);
}

/* The first field `num` of a message (a singular message field), or an empty one. */
static Buf find(Buf b, uint32_t num) {
    Field f;
    while (next_field(&b, &f) == 1)
        if (f.num == num) return f.data;
    return (Buf){b.end, b.end};
}

/* A scope's pairs then its resource's (protobuf.py: scope_fields, updated with the resource's), comma-separated. */
static int put_context(Out *o, Buf scope_logs, Buf resource_logs) {
    Buf scope = find(scope_logs, 1), name = find(scope, 1), version = find(scope, 2);
    int first = 1;
    static const Buf scope_name = {(const uint8_t *)"name", (const uint8_t *)"name" + 4};
    static const Buf scope_version = {(const uint8_t *)"version", (const uint8_t *)"version" + 7};
    if (name.p != name.end && (put_key(o, &first, "scope.", scope_name) < 0 || put_string(o, name) < 0)) return -1;
    if (version.p != version.end && (put_key(o, &first, "scope.", scope_version) < 0 || put_string(o, version) < 0))
        return -1;
    if (put_kv_pairs(o, &first, "scope.attributes.", scope, 3) < 0) return -1;
    return put_kv_pairs(o, &first, "resource.", find(resource_logs, 1), 1);
}

/* ---- Reader ---------------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Py_buffer view;
    Buf request, resource_logs, scope_logs; /* what is left of each level */
    Buf resource_logs_whole;                /* the current ResourceLogs, for its resource */
    int in_resource, in_scope;
    Out context; /* the current scope's and resource's pairs */
    Out event;   /* the event being written */
} Reader;

static int Reader_init(Reader *self, PyObject *args, PyObject *kwds) {
    PyObject *data;
    (void)kwds;
    if (!PyArg_ParseTuple(args, "O", &data)) return -1;
    if (PyObject_GetBuffer(data, &self->view, PyBUF_SIMPLE) < 0) return -1;
    self->request = (Buf){self->view.buf, (const uint8_t *)self->view.buf + self->view.len};
    if (check_request(self->request) < 0) {
        PyErr_SetString(PyExc_ValueError, "not read here: decode with upb");
        return -1;
    }
    return 0;
}

static void Reader_dealloc(Reader *self) {
    if (self->view.obj != NULL) PyBuffer_Release(&self->view);
    PyMem_Free(self->context.data);
    PyMem_Free(self->event.data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* take(n) -> up to n events as JSON (a list of bytes; empty at the end). */
static PyObject *Reader_take(Reader *self, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0 && PyErr_Occurred()) return NULL;
    PyObject *out = PyList_New(0);
    Field f;
    while (out != NULL && PyList_GET_SIZE(out) < n) {
        if (self->in_scope) {
            if (next_field(&self->scope_logs, &f) != 1) {
                self->in_scope = 0;
            } else if (f.num == 2) {
                self->event.len = 0;
                PyObject *line = NULL;
                if (put_record(&self->event, f.data, &self->context) == 0)
                    line = PyBytes_FromStringAndSize(self->event.data, self->event.len);
                if (line == NULL || PyList_Append(out, line) < 0) Py_CLEAR(out);
                Py_XDECREF(line);
            }
        } else if (self->in_resource) {
            if (next_field(&self->resource_logs, &f) != 1) {
                self->in_resource = 0;
            } else if (f.num == 2) {
                self->context.len = 0;
                self->scope_logs = f.data;
                self->in_scope = 1;
                if (put_context(&self->context, f.data, self->resource_logs_whole) < 0) Py_CLEAR(out);
            }
        } else if (next_field(&self->request, &f) != 1) {
            break;
        } else if (f.num == 1) {
            self->resource_logs = self->resource_logs_whole = f.data;
            self->in_resource = 1;
        }
    }
    return out;
}

static PyMethodDef Reader_methods[] = {
    {"take", (PyCFunction)Reader_take, METH_O, "take(n) -> up to n events as JSON bytes (an empty list at the end)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "app.shippers.otlp._otlpfast.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reader_init,
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_methods = Reader_methods,
    .tp_doc = "Reader(data): the events of an ExportLogsServiceRequest; ValueError when upb must decode it.",
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_otlpfast", NULL, -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__otlpfast(void) {
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1) {
        PyErr_SetString(PyExc_ImportError, "_otlpfast reads little-endian fixed-width fields as they are in memory");
        return NULL;
    }
    if (PyType_Ready(&ReaderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
