/* OTLP logs as protobuf (ExportLogsServiceRequest) -> one dict per log record, read straight off the wire.

   app/shippers/otlp/protobuf.py builds the same dicts from upb's messages, which costs a Python object per
   message and per attribute (about 2 µs an attribute). This reads the bytes once to check that it can read
   them exactly as upb would (`check_*`: wire types, no singular field or oneof member given twice, valid UTF-8,
   nesting well within upb's limit, no event time that protobuf.py would write as text), then builds the
   dicts in slices as the caller asks (`Reader.take`), in the order protobuf.py sets their keys. A body it
   cannot read exactly is left to upb: `Reader(data)` raises ValueError, and protobuf.py decodes it itself. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 48 /* messages deep; upb refuses past 100 */
#define NS_BY_MAGNITUDE 100000000000000000ULL /* app/shippers/common.py: from here up a number is nanoseconds */

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

static int check_message(Buf b, int depth, const Known *known, int n_known) {
    Field f;
    int rc;
    uint64_t seen = 0;
    if (depth > MAX_DEPTH) return -1;
    while ((rc = next_field(&b, &f)) == 1) {
        for (int i = 0; i < n_known; i++) {
            if (known[i].num != f.num) continue;
            if (known[i].wt != f.wt) return -1;
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
    Buf copy = b;
    Field f;
    int members = 0, rc;
    while ((rc = next_field(&copy, &f)) == 1)
        if (f.num >= 1 && f.num <= 7) members++;
    if (rc < 0 || members > 1) return -1;
    return check_message(b, depth, k, 7);
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

/* ---- building (the bytes are known good: only memory can fail) ------------------------------------------- */

static PyObject *text(Buf s) { return PyUnicode_DecodeUTF8((const char *)s.p, s.end - s.p, "strict"); }

static PyObject *hex(Buf s) {
    static const char digits[] = "0123456789abcdef";
    Py_ssize_t n = s.end - s.p;
    PyObject *out = PyUnicode_New(2 * n, 127);
    if (out == NULL) return NULL;
    Py_UCS1 *w = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        w[2 * i] = digits[s.p[i] >> 4];
        w[2 * i + 1] = digits[s.p[i] & 15];
    }
    return out;
}

static PyObject *base64(Buf s) {
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    Py_ssize_t n = s.end - s.p;
    PyObject *out = PyUnicode_New(4 * ((n + 2) / 3), 127);
    if (out == NULL) return NULL;
    Py_UCS1 *w = PyUnicode_1BYTE_DATA(out);
    Py_ssize_t i = 0, j = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = ((uint32_t)s.p[i] << 16) | ((uint32_t)s.p[i + 1] << 8) | s.p[i + 2];
        w[j++] = table[v >> 18];
        w[j++] = table[(v >> 12) & 63];
        w[j++] = table[(v >> 6) & 63];
        w[j++] = table[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)s.p[i] << 16 | (i + 1 < n ? (uint32_t)s.p[i + 1] << 8 : 0);
        w[j++] = table[v >> 18];
        w[j++] = table[(v >> 12) & 63];
        w[j++] = i + 1 < n ? table[(v >> 6) & 63] : '=';
        w[j++] = '=';
    }
    return out;
}

static PyObject *any_value(Buf b);

/* KeyValue -> (key, value) into `into`, the key after `prefix` (NULL: none). */
static int put_kv(PyObject *into, Buf b, PyObject *prefix) {
    Field f;
    Buf key = {b.p, b.p}, value = {NULL, NULL};
    while (next_field(&b, &f) == 1) {
        if (f.num == 1) key = f.data;
        else if (f.num == 2) value = f.data;
    }
    PyObject *name = text(key);
    if (name == NULL) return -1;
    if (prefix != NULL) {
        PyObject *full = PyUnicode_Concat(prefix, name);
        Py_DECREF(name);
        if (full == NULL) return -1;
        name = full;
    }
    PyObject *v = value.p == NULL ? Py_NewRef(Py_None) : any_value(value);
    if (v == NULL) {
        Py_DECREF(name);
        return -1;
    }
    int rc = PyDict_SetItem(into, name, v);
    Py_DECREF(name);
    Py_DECREF(v);
    return rc;
}

static PyObject *any_value(Buf b) {
    Field f;
    while (next_field(&b, &f) == 1) {
        switch (f.num) {
        case 1: return text(f.data);
        case 2: return PyBool_FromLong(f.v != 0);
        case 3: return PyLong_FromLongLong((long long)f.v);
        case 4: {
            double d;
            memcpy(&d, &f.v, 8);
            return PyFloat_FromDouble(d);
        }
        case 5: {
            PyObject *list = PyList_New(0);
            Field g;
            Buf items = f.data;
            while (list != NULL && next_field(&items, &g) == 1) {
                if (g.num != 1) continue;
                PyObject *item = any_value(g.data);
                if (item == NULL || PyList_Append(list, item) < 0) Py_CLEAR(list);
                Py_XDECREF(item);
            }
            return list;
        }
        case 6: {
            PyObject *dict = PyDict_New();
            Field g;
            Buf items = f.data;
            while (dict != NULL && next_field(&items, &g) == 1)
                if (g.num == 1 && put_kv(dict, g.data, NULL) < 0) Py_CLEAR(dict);
            return dict;
        }
        case 7: return base64(f.data);
        }
    }
    return Py_NewRef(Py_None);
}

static PyObject *s_message, *s_time, *s_severity_text, *s_severity_number, *s_trace_id, *s_span_id, *s_flags,
    *s_event_name, *s_attributes, *s_scope_name, *s_scope_version, *s_scope_attributes, *s_resource;

static int set_new(PyObject *dict, PyObject *key, PyObject *value) {
    if (value == NULL) return -1;
    int rc = PyDict_SetItem(dict, key, value);
    Py_DECREF(value);
    return rc;
}

/* One log record's event: protobuf.py's _event, key for key. */
static PyObject *record_event(Buf b, PyObject *context) {
    Field f;
    Buf body = {NULL, NULL}, severity_text = {NULL, NULL}, trace = {NULL, NULL}, span = {NULL, NULL};
    Buf event_name = {NULL, NULL};
    uint64_t time = 0, observed = 0, severity = 0, flags = 0;
    Buf scan = b;
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
    PyObject *event = NULL;
    if (body.p != NULL) {
        PyObject *value = any_value(body);
        if (value == NULL) return NULL;
        if (PyDict_CheckExact(value)) {
            event = value;
        } else {
            event = PyDict_New();
            if (event == NULL || (value != Py_None && PyDict_SetItem(event, s_message, value) < 0)) Py_CLEAR(event);
            Py_DECREF(value);
        }
    } else {
        event = PyDict_New();
    }
    if (event == NULL) return NULL;
    uint64_t t = time ? time : observed;
    if ((t && set_new(event, s_time, PyLong_FromUnsignedLongLong(t)) < 0) ||
        (severity_text.p != severity_text.end && set_new(event, s_severity_text, text(severity_text)) < 0) ||
        ((int32_t)severity && set_new(event, s_severity_number, PyLong_FromLong((int32_t)severity)) < 0) ||
        (trace.p != trace.end && set_new(event, s_trace_id, hex(trace)) < 0) ||
        (span.p != span.end && set_new(event, s_span_id, hex(span)) < 0) ||
        (flags && set_new(event, s_flags, PyLong_FromUnsignedLong((unsigned long)flags)) < 0) ||
        (event_name.p != event_name.end && set_new(event, s_event_name, text(event_name)) < 0))
        goto fail;
    while (next_field(&b, &f) == 1)
        if (f.num == 6 && put_kv(event, f.data, s_attributes) < 0) goto fail;
    if (PyDict_Update(event, context) < 0) goto fail;
    return event;
fail:
    Py_DECREF(event);
    return NULL;
}

/* The first field `num` of a message (a singular message field), or an empty one. */
static Buf find(Buf b, uint32_t num) {
    Field f;
    while (next_field(&b, &f) == 1)
        if (f.num == num) return f.data;
    return (Buf){b.end, b.end};
}

static PyObject *resource_fields(Buf resource_logs) {
    PyObject *found = PyDict_New();
    Buf resource = find(resource_logs, 1);
    Field f;
    while (found != NULL && next_field(&resource, &f) == 1)
        if (f.num == 1 && put_kv(found, f.data, s_resource) < 0) Py_CLEAR(found);
    return found;
}

static PyObject *scope_context(Buf scope_logs, PyObject *resource) {
    PyObject *found = PyDict_New();
    if (found == NULL) return NULL;
    Buf scope = find(scope_logs, 1), name = find(scope, 1), version = find(scope, 2);
    Field f;
    if ((name.p != name.end && set_new(found, s_scope_name, text(name)) < 0) ||
        (version.p != version.end && set_new(found, s_scope_version, text(version)) < 0))
        goto fail;
    while (next_field(&scope, &f) == 1)
        if (f.num == 3 && put_kv(found, f.data, s_scope_attributes) < 0) goto fail;
    if (PyDict_Update(found, resource) < 0) goto fail;
    return found;
fail:
    Py_DECREF(found);
    return NULL;
}

/* ---- Reader ---------------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Py_buffer view;
    Buf request, resource_logs, scope_logs; /* what is left of each level */
    PyObject *resource, *context;           /* the current resource's fields, the current scope's */
} Reader;

static int Reader_init(Reader *self, PyObject *args, PyObject *kwds) {
    PyObject *data;
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
    Py_XDECREF(self->resource);
    Py_XDECREF(self->context);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* take(n) -> up to n events (a list; empty at the end). */
static PyObject *Reader_take(Reader *self, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0 && PyErr_Occurred()) return NULL;
    PyObject *out = PyList_New(0);
    Field f;
    while (out != NULL && PyList_GET_SIZE(out) < n) {
        if (self->context != NULL) {
            if (next_field(&self->scope_logs, &f) != 1) {
                Py_CLEAR(self->context);
            } else if (f.num == 2) {
                PyObject *event = record_event(f.data, self->context);
                if (event == NULL || PyList_Append(out, event) < 0) Py_CLEAR(out);
                Py_XDECREF(event);
            }
        } else if (self->resource != NULL) {
            if (next_field(&self->resource_logs, &f) != 1) {
                Py_CLEAR(self->resource);
            } else if (f.num == 2) {
                self->context = scope_context(f.data, self->resource);
                self->scope_logs = f.data;
                if (self->context == NULL) Py_CLEAR(out);
            }
        } else if (next_field(&self->request, &f) != 1) {
            break;
        } else if (f.num == 1) {
            self->resource = resource_fields(f.data);
            self->resource_logs = f.data;
            if (self->resource == NULL) Py_CLEAR(out);
        }
    }
    return out;
}

static PyMethodDef Reader_methods[] = {
    {"take", (PyCFunction)Reader_take, METH_O, "take(n) -> a list of up to n events (empty at the end)."},
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

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_otlpfast", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__otlpfast(void) {
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1) {
        PyErr_SetString(PyExc_ImportError, "_otlpfast reads little-endian fixed-width fields as they are in memory");
        return NULL;
    }
    if (PyType_Ready(&ReaderType) < 0) return NULL;
#define KEY(var, s) if ((var = PyUnicode_InternFromString(s)) == NULL) return NULL;
    KEY(s_message, "message") KEY(s_time, "_time") KEY(s_severity_text, "severity_text")
    KEY(s_severity_number, "severity_number") KEY(s_trace_id, "trace_id") KEY(s_span_id, "span_id")
    KEY(s_flags, "flags") KEY(s_event_name, "event_name") KEY(s_attributes, "attributes.")
    KEY(s_scope_name, "scope.name") KEY(s_scope_version, "scope.version")
    KEY(s_scope_attributes, "scope.attributes.") KEY(s_resource, "resource.")
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
