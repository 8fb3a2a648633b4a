/* The compiled row builder: raw JSON events -> flattened JSON -> binary COPY rows, with no Python object per event.

   app/ingest/rows.py's general path decodes each event with msgspec, flattens the dict, re-encodes it and packs a
   COPY row: about 3 µs of Python per event. This reads the event's bytes once, writes the flattened JSON as msgspec
   would have encoded it (byte for byte: same key order, no whitespace, the same string escapes and numbers), reads
   the timestamp as the default reader does, and appends the row. It serves the events it can prove it handles
   exactly as the general path does, and stops at the first one it cannot (a NUL escape, a number msgspec would
   write differently, an odd timestamp, a repeated key, invalid UTF-8 or JSON, a size or day bound...): the caller
   reads that one event the general way, which also words its failure, and calls again from the next.

   Nothing is changed for an event it stops at, so the general path sees the same state it would have seen.
   tests/unit/ingest/test_compiled_rows.py compares both paths byte for byte. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 64       /* deeper nesting: the general path (its bound, 256, words the failure) */
#define MAX_ARRAY_KEYS 32  /* an object inside an array with more keys: the general path checks repeats */
#define CACHE_SLOTS 8      /* shapes remembered, so alternating shapes do not rebuild their key tuples */
#define PG_EPOCH_OFFSET_US 946684800000000LL
#define DAY_US 86400000000LL
#define MINUTE_US 60000000LL

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra) cap *= 2;
    char *data = PyMem_Realloc(b->data, cap);
    if (!data) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (n == 0) return 0; /* an empty key: nothing to copy, and `b` may have no memory yet */
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

static inline int buf_byte(Buf *b, char c) {
    if (b->len >= b->cap && buf_reserve(b, 1) < 0) return -1;
    b->data[b->len++] = c;
    return 0;
}

typedef struct {
    char *skel; /* the shape's skeleton: per field a type code, its path, a NUL; then the stamped flag */
    Py_ssize_t len;
} Slot;

typedef struct {
    PyObject_HEAD
    int32_t dataset_id;
    int64_t arrival_us;
    int64_t max_us; /* the latest time accepted, exclusive (app/ingest/timestamps.py MAX_US); the earliest is 0 */
    char *field; /* the timestamp field, UTF-8 */
    Py_ssize_t field_len;
    Py_ssize_t limit, max_days;
    PyObject *days, *minutes, *shapes, *stamped_keys;
    Slot slots[CACHE_SLOTS];
    int next_slot;
    int64_t last_day;
    Buf out, ev, skel, path, sink; /* rows of this call, the event, its shape, the key path, a skipped value */
} FastRows;

/* ---- parsing one event ------------------------------------------------------------------------------------------ */

enum { STOP = -1, ERROR = -2 }; /* STOP: the general path takes this event; ERROR: a Python exception is set */

typedef struct {
    const unsigned char *p, *end;
    FastRows *self;
    int have_time;          /* 0 none, 1 from a top-level key, 2 from a flattened path */
    const unsigned char *time_at; /* the timestamp value's first byte */
    int any_number;               /* reading the timestamp: any JSON number (it is not stored) */
} Event;

static inline void skip_ws(Event *e) {
    while (e->p < e->end && (*e->p == ' ' || *e->p == '\t' || *e->p == '\n' || *e->p == '\r')) e->p++;
}

/* One UTF-8 sequence at s (s[0] >= 0x80) as Python's strict decoder accepts it: its length, or 0. */
static inline int utf8_len(const unsigned char *s, const unsigned char *end) {
    unsigned char c = s[0];
    Py_ssize_t left = end - s;
#define CONT(i) (left > (i) && (s[i] & 0xC0) == 0x80)
    if (c >= 0xC2 && c <= 0xDF) return CONT(1) ? 2 : 0;
    if (c == 0xE0) return left > 2 && s[1] >= 0xA0 && s[1] <= 0xBF && CONT(2) ? 3 : 0;
    if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return CONT(1) && CONT(2) ? 3 : 0;
    if (c == 0xED) return left > 2 && s[1] >= 0x80 && s[1] <= 0x9F && CONT(2) ? 3 : 0;
    if (c == 0xF0) return left > 3 && s[1] >= 0x90 && s[1] <= 0xBF && CONT(2) && CONT(3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3) return CONT(1) && CONT(2) && CONT(3) ? 4 : 0;
    if (c == 0xF4) return left > 3 && s[1] >= 0x80 && s[1] <= 0x8F && CONT(2) && CONT(3) ? 4 : 0;
#undef CONT
    return 0;
}

static int hex4(const unsigned char *s, const unsigned char *end, unsigned *cp) {
    if (end - s < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    *cp = v;
    return 0;
}

static int put_utf8(Buf *b, unsigned cp) {
    char s[4];
    int n;
    if (cp < 0x800) {
        s[0] = (char)(0xC0 | (cp >> 6));
        s[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        s[0] = (char)(0xE0 | (cp >> 12));
        s[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        s[0] = (char)(0xF0 | (cp >> 18));
        s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_put(b, s, n);
}

/* A string (e->p just past its opening quote) written to `b` as msgspec encodes it: `"`, `\` and control characters
   escaped (\b \t \n \f \r short, the rest \u00xx), everything else as UTF-8. Leaves e->p past the closing quote. */
static int copy_string(Event *e, Buf *b) {
    static const char HEX[] = "0123456789abcdef";
    if (buf_byte(b, '"') < 0) return ERROR;
    const unsigned char *p = e->p, *end = e->end, *run = p;
    for (;;) {
        while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80) p++;
        if (p >= end || *p < 0x20) return STOP; /* unterminated, or a raw control character (not JSON) */
        if (*p >= 0x80) {
            int n = utf8_len(p, end);
            if (!n) return STOP;
            p += n;
            continue;
        }
        if (buf_put(b, (const char *)run, p - run) < 0) return ERROR;
        if (*p == '"') {
            e->p = p + 1;
            return buf_byte(b, '"') < 0 ? ERROR : 0;
        }
        /* a backslash */
        if (p + 1 >= end) return STOP;
        unsigned char c = p[1];
        const char *keep = NULL;
        switch (c) {
            case '"': keep = "\\\""; break;
            case '\\': keep = "\\\\"; break;
            case 'b': keep = "\\b"; break;
            case 'f': keep = "\\f"; break;
            case 'n': keep = "\\n"; break;
            case 'r': keep = "\\r"; break;
            case 't': keep = "\\t"; break;
            case '/': keep = "/"; break;
            case 'u': break;
            default: return STOP;
        }
        if (keep) {
            if (buf_put(b, keep, (Py_ssize_t)strlen(keep)) < 0) return ERROR;
            p += 2;
            run = p;
            continue;
        }
        unsigned cp;
        if (hex4(p + 2, end, &cp) < 0 || cp == 0) return STOP; /* U+0000: jsonb cannot store it */
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                return STOP; /* a lone surrogate */
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return STOP;
        }
        int rc;
        if (cp == '"') rc = buf_put(b, "\\\"", 2);
        else if (cp == '\\') rc = buf_put(b, "\\\\", 2);
        else if (cp == '\b') rc = buf_put(b, "\\b", 2);
        else if (cp == '\t') rc = buf_put(b, "\\t", 2);
        else if (cp == '\n') rc = buf_put(b, "\\n", 2);
        else if (cp == '\f') rc = buf_put(b, "\\f", 2);
        else if (cp == '\r') rc = buf_put(b, "\\r", 2);
        else if (cp < 0x20) {
            char s[6] = {'\\', 'u', '0', '0', HEX[cp >> 4], HEX[cp & 15]};
            rc = buf_put(b, s, 6);
        } else if (cp < 0x80) rc = buf_byte(b, (char)cp);
        else rc = put_utf8(b, cp);
        if (rc < 0) return ERROR;
        run = p;
    }
}

/* A number, written as it is when msgspec would write it the same way: integers of up to 18 digits (not -0), and
   decimals without an exponent, of at most 15 significant digits (so the double's shortest form is the literal),
   not below 1e-4, ending in a non-zero digit or being `.0`. Returns 'i', 'f' or STOP. */
static int copy_number(Event *e, Buf *b) {
    const unsigned char *start = e->p, *p = e->p, *end = e->end;
    if (p < end && *p == '-') p++;
    const unsigned char *int_start = p;
    if (p >= end || *p < '0' || *p > '9') return STOP;
    if (*p == '0') p++;
    else
        while (p < end && *p >= '0' && *p <= '9') p++;
    Py_ssize_t int_digits = p - int_start;
    if (e->any_number) { /* the grammar only: number_time() reads it */
        if (p < end && *p == '.') {
            const unsigned char *frac = ++p;
            while (p < end && *p >= '0' && *p <= '9') p++;
            if (p == frac) return STOP;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            p++;
            if (p < end && (*p == '+' || *p == '-')) p++;
            const unsigned char *exp = p;
            while (p < end && *p >= '0' && *p <= '9') p++;
            if (p == exp) return STOP;
        }
        e->p = p;
        return 'f';
    }
    int kind = 'i';
    if (p < end && *p == '.') {
        const unsigned char *frac = ++p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        Py_ssize_t frac_digits = p - frac;
        if (frac_digits == 0) return STOP;
        if (p[-1] == '0' && frac_digits != 1) return STOP; /* 12.50 is written 12.5 */
        Py_ssize_t lead = 0, sig;
        if (*int_start == '0') {
            while (lead < frac_digits && frac[lead] == '0') lead++;
            if (lead == frac_digits) sig = 1;           /* 0.0 */
            else if (lead > 3) return STOP;             /* below 1e-4: msgspec may use an exponent */
            else sig = frac_digits - lead;
        } else {
            sig = int_digits + frac_digits;
        }
        if (sig > 15) return STOP;
        kind = 'f';
    } else {
        if (int_digits > 18) return STOP;
        if (*start == '-' && int_digits == 1 && *int_start == '0') return STOP; /* -0 is written 0 */
    }
    if (p < end && (*p == 'e' || *p == 'E')) return STOP;
    if (buf_put(b, (const char *)start, p - start) < 0) return ERROR;
    e->p = p;
    return kind;
}

static int literal(Event *e, Buf *b, const char *word, Py_ssize_t n) {
    if (e->end - e->p < n || memcmp(e->p, word, n) != 0) return STOP;
    e->p += n;
    return buf_put(b, word, n) < 0 ? ERROR : 0;
}

/* After a member or an element: 1 at a `,` (copied to `b` unless it is NULL; e->p then at the next one), 0 past
   the closing `close` (copied likewise), STOP at anything else. */
static int after_item(Event *e, Buf *b, char close) {
    skip_ws(e);
    if (e->p >= e->end || (*e->p != ',' && *e->p != close)) return STOP;
    char c = (char)*e->p++;
    if (b && buf_byte(b, c) < 0) return ERROR;
    if (c == close) return 0;
    skip_ws(e);
    return 1;
}

static int copy_value(Event *e, Buf *b, int depth);

/* A key (e->p at its opening quote): its raw bytes, which must need no unescaping (a backslash stops: keys are
   compared and shown as they are) and be valid UTF-8. Leaves e->p past the closing quote. */
static int scan_key(Event *e, const unsigned char **key, Py_ssize_t *len) {
    const unsigned char *start = e->p + 1, *p = start, *end = e->end;
    while (p < end && *p != '"') {
        if (*p == '\\' || *p < 0x20) return STOP;
        if (*p >= 0x80) {
            int n = utf8_len(p, end);
            if (!n) return STOP;
            p += n;
        } else {
            p++;
        }
    }
    if (p >= end) return STOP;
    *key = start;
    *len = p - start;
    e->p = p + 1;
    return 0;
}

/* An object inside an array, kept as an object (only the event's own objects are flattened). */
static int copy_object(Event *e, Buf *b, int depth) {
    const unsigned char *keys[MAX_ARRAY_KEYS];
    Py_ssize_t key_lens[MAX_ARRAY_KEYS];
    int count = 0;
    e->p++; /* { */
    if (buf_byte(b, '{') < 0) return ERROR;
    skip_ws(e);
    if (e->p < e->end && *e->p == '}') {
        e->p++;
        return buf_byte(b, '}') < 0 ? ERROR : 0;
    }
    for (;;) {
        if (e->p >= e->end || *e->p != '"' || count == MAX_ARRAY_KEYS) return STOP;
        const unsigned char *key;
        Py_ssize_t len;
        int rc = scan_key(e, &key, &len);
        if (rc) return rc;
        if (buf_byte(b, '"') < 0 || buf_put(b, (const char *)key, len) < 0 || buf_byte(b, '"') < 0) return ERROR;
        for (int i = 0; i < count; i++) /* a repeated key: msgspec keeps the last, in the first one's place */
            if (key_lens[i] == len && memcmp(keys[i], key, len) == 0) return STOP;
        keys[count] = key;
        key_lens[count++] = len;
        skip_ws(e);
        if (e->p >= e->end || *e->p != ':') return STOP;
        e->p++;
        if (buf_byte(b, ':') < 0) return ERROR;
        skip_ws(e);
        if ((rc = copy_value(e, b, depth + 1)) < 0) return rc;
        if ((rc = after_item(e, b, '}')) <= 0) return rc;
    }
}

static int copy_array(Event *e, Buf *b, int depth) {
    e->p++; /* [ */
    if (buf_byte(b, '[') < 0) return ERROR;
    skip_ws(e);
    if (e->p < e->end && *e->p == ']') {
        e->p++;
        return buf_byte(b, ']') < 0 ? ERROR : 0;
    }
    for (;;) {
        int rc = copy_value(e, b, depth + 1);
        if (rc < 0) return rc;
        if ((rc = after_item(e, b, ']')) <= 0) return rc;
    }
}

/* Any value, copied in msgspec's form; returns its type code ('s', 'i', 'f', 'b', 'n', 'a', 'o') or STOP/ERROR. */
static int copy_value(Event *e, Buf *b, int depth) {
    if (depth > MAX_DEPTH || e->p >= e->end) return STOP;
    int rc;
    switch (*e->p) {
        case '"':
            e->p++;
            return (rc = copy_string(e, b)) < 0 ? rc : 's';
        case '{':
            return (rc = copy_object(e, b, depth)) < 0 ? rc : 'o';
        case '[':
            return (rc = copy_array(e, b, depth)) < 0 ? rc : 'a';
        case 't':
            return (rc = literal(e, b, "true", 4)) < 0 ? rc : 'b';
        case 'f':
            return (rc = literal(e, b, "false", 5)) < 0 ? rc : 'b';
        case 'n':
            return (rc = literal(e, b, "null", 4)) < 0 ? rc : 'n';
        default:
            return copy_number(e, b);
    }
}

/* The members of an object of the event (e->p just past its `{`), flattened into self->ev as `"path":value` pairs
   and recorded in the skeleton. self->path holds the prefix (`a.b.`). */
static int flatten_members(Event *e, int depth) {
    FastRows *self = e->self;
    Py_ssize_t prefix_len = self->path.len;
    for (;;) {
        if (e->p >= e->end || *e->p != '"') return STOP;
        const unsigned char *key;
        Py_ssize_t key_len;
        int rc = scan_key(e, &key, &key_len);
        if (rc) return rc;
        self->path.len = prefix_len;
        if (buf_put(&self->path, (const char *)key, key_len) < 0) return ERROR;
        skip_ws(e);
        if (e->p >= e->end || *e->p != ':') return STOP;
        e->p++;
        skip_ws(e);
        if (e->p >= e->end) return STOP;
        int is_field = self->path.len == self->field_len && memcmp(self->path.data, self->field, self->field_len) == 0;
        int nested = 0;
        if (*e->p == '{') { /* an empty object stays a value; any other is flattened */
            const unsigned char *q = e->p + 1;
            while (q < e->end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
            nested = q < e->end && *q != '}';
        }
        if (is_field && (depth == 0 || (!nested && e->have_time != 1))) {
            /* The timestamp: a top-level key is taken out before flattening, whatever it holds; else a dotted
               field naming a flattened value is taken out after. Named twice: the general path decides. */
            if (e->have_time) return STOP;
            e->have_time = depth == 0 ? 1 : 2;
            e->time_at = e->p;
            self->sink.len = 0;
            e->any_number = 1;
            rc = copy_value(e, &self->sink, depth + 1);
            e->any_number = 0;
            if (rc < 0) return rc;
        } else if (nested) {
            if (depth + 1 > MAX_DEPTH) return STOP;
            e->p++;
            skip_ws(e);
            if (buf_byte(&self->path, '.') < 0) return ERROR;
            if ((rc = flatten_members(e, depth + 1)) < 0) return rc;
        } else {
            if (self->ev.len > 1 && buf_byte(&self->ev, ',') < 0) return ERROR;
            if (buf_byte(&self->ev, '"') < 0 || buf_put(&self->ev, self->path.data, self->path.len) < 0 ||
                buf_put(&self->ev, "\":", 2) < 0)
                return ERROR;
            int kind = copy_value(e, &self->ev, depth + 1);
            if (kind < 0) return kind;
            if (buf_byte(&self->skel, (char)kind) < 0 || buf_put(&self->skel, self->path.data, self->path.len) < 0 ||
                buf_byte(&self->skel, '\0') < 0)
                return ERROR;
        }
        self->path.len = prefix_len;
        if ((rc = after_item(e, NULL, '}')) <= 0) return rc;
    }
}

/* ---- timestamps ------------------------------------------------------------------------------------------------- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static inline int digits(const unsigned char *s, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* `YYYY-MM-DDTHH:MM:SS[.f{1,6}][Z|±HH:MM]` (no offset: UTC), as datetime.fromisoformat reads it; other forms STOP. */
static int rfc3339(const unsigned char *s, Py_ssize_t n, int64_t *us) {
    int y, mo, d, h, mi, sec, frac = 0, oh = 0, om = 0, sign = 0;
    if (n < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return STOP;
    if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) || digits(s + 11, 2, &h) ||
        digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
        return STOP;
    Py_ssize_t i = 19;
    if (i < n && s[i] == '.') {
        int count = 0;
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9' && count < 7) {
            frac = frac * 10 + (s[i++] - '0');
            count++;
        }
        if (count == 0 || count > 6) return STOP;
        for (; count < 6; count++) frac *= 10;
    }
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        sign = s[i] == '+' ? 1 : -1;
        if (n - i != 6 || s[i + 3] != ':' || digits(s + i + 1, 2, &oh) || digits(s + i + 4, 2, &om)) return STOP;
        if (oh > 23 || om > 59) return STOP;
        i += 6;
    }
    if (i != n) return STOP;
    static const int MDAYS[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return STOP;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > MDAYS[mo - 1] + (mo == 2 && leap)) return STOP;
    int64_t seconds = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
    seconds -= sign * (oh * 3600 + om * 60);
    *us = seconds * 1000000 + frac;
    return 0;
}

/* app/ingest/timestamps.py's number_to_us for a JSON number literal: unit from magnitude; negative ones STOP. */
static int number_time(const unsigned char *s, const unsigned char *end, int64_t max_us, int64_t *us) {
    const unsigned char *p = s;
    while (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == 'e' || *p == 'E' || *p == '+'))
        p++;
    Py_ssize_t n = p - s;
    if (n == 0 || n > 40 || *s == '-') return STOP;
    int is_int = 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') is_int = 0;
    if (is_int) {
        if (n > 18 || (n > 1 && s[0] == '0')) return STOP;
        int64_t v = 0;
        for (Py_ssize_t i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
        if (v < 100000000000LL) *us = v * 1000000;
        else if (v < 100000000000000LL) *us = v * 1000;
        else if (v < 100000000000000000LL) *us = v;
        else *us = v / 1000;
        return 0;
    }
    char text[48];
    memcpy(text, s, n);
    text[n] = '\0';
    char *stop;
    double v = PyOS_string_to_double(text, &stop, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return STOP;
    }
    if (*stop != '\0' || !isfinite(v)) return STOP;
    double r;
    if (v < 1e11) r = nearbyint(v * 1e6); /* Python's round(): halves to even, as the default rounding mode does */
    else if (v < 1e14) r = nearbyint(v * 1e3);
    else if (v < 1e17) r = nearbyint(v);
    else r = nearbyint(v / 1e3);
    if (!(r >= 0 && r < (double)max_us)) return STOP;
    *us = (int64_t)r;
    return 0;
}

static int read_time(Event *e, int64_t *us) {
    const unsigned char *v = e->time_at;
    if (*v == '"') {
        const unsigned char *s = v + 1, *q = s;
        while (q < e->end && *q != '"' && *q != '\\') q++;
        if (q >= e->end || *q != '"') return STOP;
        if (rfc3339(s, q - s, us) < 0) return STOP;
    } else if ((*v >= '0' && *v <= '9') || *v == '-') {
        if (number_time(v, e->end, e->self->max_us, us) < 0) return STOP;
    } else {
        return STOP;
    }
    return *us >= 0 && *us < e->self->max_us ? 0 : STOP;
}

/* ---- shapes ----------------------------------------------------------------------------------------------------- */

static PyObject *type_of(char code) {
    switch (code) {
        case 's': return (PyObject *)&PyUnicode_Type;
        case 'i': return (PyObject *)&PyLong_Type;
        case 'f': return (PyObject *)&PyFloat_Type;
        case 'b': return (PyObject *)&PyBool_Type;
        case 'n': return (PyObject *)Py_TYPE(Py_None);
        case 'a': return (PyObject *)&PyList_Type;
        default: return (PyObject *)&PyDict_Type;
    }
}

/* The event's shape is known (cached), or is recorded now; STOP when two of its keys flatten to one path. */
static int note_shape(FastRows *self, int stamped) {
    Buf *skel = &self->skel;
    if (buf_byte(skel, (char)stamped) < 0) return ERROR;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (self->slots[i].len == skel->len && memcmp(self->slots[i].skel, skel->data, skel->len) == 0) return 0;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < skel->len - 1; i++)
        if (skel->data[i] == '\0') count++;
    PyObject *keys = PyTuple_New(count), *types = PyTuple_New(count), *seen = NULL, *shape = NULL;
    int rc = ERROR;
    if (!keys || !types) goto done;
    const char *s = skel->data;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t n = (Py_ssize_t)strlen(s + 1);
        PyObject *key = PyUnicode_DecodeUTF8(s + 1, n, "strict");
        if (!key) goto done;
        PyTuple_SET_ITEM(keys, i, key);
        PyObject *kind = type_of(s[0]);
        Py_INCREF(kind);
        PyTuple_SET_ITEM(types, i, kind);
        s += n + 2;
    }
    if (!(seen = PySet_New(keys))) goto done;
    if (PySet_GET_SIZE(seen) != count) {
        rc = STOP; /* two keys flatten to one path: the general path keeps the later one */
        goto done;
    }
    /* An event with no fields has no shape to record (nor does the general path record one). */
    if (count && !(shape = PyTuple_Pack(2, keys, types))) goto done;
    if (count && PySet_Add(self->shapes, shape) < 0) goto done;
    if (count && stamped && PySet_Add(self->stamped_keys, keys) < 0) goto done;
    Slot *slot = &self->slots[self->next_slot];
    self->next_slot = (self->next_slot + 1) % CACHE_SLOTS;
    char *copy = PyMem_Realloc(slot->skel, skel->len ? skel->len : 1);
    if (!copy) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(copy, skel->data, skel->len);
    slot->skel = copy;
    slot->len = skel->len;
    rc = 0;
done:
    Py_XDECREF(keys);
    Py_XDECREF(types);
    Py_XDECREF(seen);
    Py_XDECREF(shape);
    return rc;
}

/* ---- the per-chunk loop ----------------------------------------------------------------------------------------- */

static int flush_minute(FastRows *self, int64_t minute, Py_ssize_t run) {
    if (!run) return 0;
    PyObject *key = PyLong_FromLongLong(minute);
    if (!key) return -1;
    PyObject *old = PyDict_GetItemWithError(self->minutes, key);
    long long count = run;
    if (old) count += PyLong_AsLongLong(old);
    else if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    PyObject *value = PyLong_FromLongLong(count);
    int rc = value ? PyDict_SetItem(self->minutes, key, value) : -1;
    Py_XDECREF(value);
    Py_DECREF(key);
    return rc;
}

static void put_be(char *s, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--) {
        s[i] = (char)(v & 0xFF);
        v >>= 8;
    }
}

/* One event: 1 when its row was added, 0 when it is blank (skipped), STOP or ERROR. */
static int add_event(FastRows *self, const unsigned char *data, Py_ssize_t n, int64_t *minute, Py_ssize_t *run,
                     Py_ssize_t *stamped_count, Py_ssize_t *size) {
    if (n == 0) return 0;
    if (n > self->limit) return STOP;
    Event e = {data, data + n, self, 0, NULL, 0};
    self->ev.len = 0;
    self->skel.len = 0;
    self->path.len = 0;
    if (buf_byte(&self->ev, '{') < 0) return ERROR;
    skip_ws(&e);
    if (e.p >= e.end || *e.p != '{') return STOP;
    e.p++;
    skip_ws(&e);
    int rc;
    if (e.p < e.end && *e.p == '}') e.p++;
    else if ((rc = flatten_members(&e, 0)) < 0) return rc;
    skip_ws(&e);
    if (e.p != e.end) return STOP;
    if (buf_byte(&self->ev, '}') < 0) return ERROR;
    Py_ssize_t len = self->ev.len;
    if (len > self->limit) return STOP;
    int64_t us;
    if (e.have_time) {
        if (read_time(&e, &us) < 0) return STOP;
    } else {
        us = self->arrival_us;
    }
    /* Every check comes before anything is recorded, so that a stop leaves no trace for the general path. */
    int64_t day = us / DAY_US;
    PyObject *new_day = NULL;
    if (day != self->last_day) {
        if (!(new_day = PyLong_FromLongLong(day))) return ERROR;
        int known = PySet_Contains(self->days, new_day);
        if (known != 0) {
            Py_CLEAR(new_day);
            if (known < 0) return ERROR;
            self->last_day = day;
        } else if (PySet_GET_SIZE(self->days) >= self->max_days) {
            Py_DECREF(new_day);
            return STOP;
        }
    }
    if ((rc = note_shape(self, !e.have_time)) != 0) {
        Py_XDECREF(new_day);
        return rc;
    }
    if (new_day) {
        rc = PySet_Add(self->days, new_day);
        Py_DECREF(new_day);
        if (rc < 0) return ERROR;
        self->last_day = day;
    }
    if (!e.have_time) (*stamped_count)++;
    int64_t m = us / MINUTE_US;
    if (m != *minute) {
        if (flush_minute(self, *minute, *run) < 0) return ERROR;
        *minute = m;
        *run = 0;
    }
    (*run)++;
    if (buf_reserve(&self->out, 39 + len) < 0) return ERROR;
    char *row = self->out.data + self->out.len;
    /* app/ingest/copyfmt.py's ROW: field count, then (length, value) per column. */
    put_be(row, 4, 2);
    put_be(row + 2, 4, 4);
    put_be(row + 6, (uint32_t)self->dataset_id, 4);
    put_be(row + 10, 8, 4);
    put_be(row + 14, (uint64_t)(us - PG_EPOCH_OFFSET_US), 8);
    put_be(row + 22, 8, 4);
    put_be(row + 26, (uint64_t)(self->arrival_us - PG_EPOCH_OFFSET_US), 8);
    put_be(row + 34, (uint32_t)(len + 1), 4);
    row[38] = 1; /* jsonb's binary form: a version byte, then the text */
    memcpy(row + 39, self->ev.data, len);
    self->out.len += 39 + len;
    *size += len;
    return 1;
}

PyDoc_STRVAR(add_doc,
             "add(lines, start, buf) -> (stop, rows, size, stamped)\n\n"
             "Appends the rows of lines[start:] to buf until an event the general path must read; `stop` is its\n"
             "position (len(lines) when none). `rows` events were added (blank lines skipped), of `size` JSON bytes,\n"
             "`stamped` of them with the arrival time.");

static PyObject *FastRows_add(FastRows *self, PyObject *args) {
    PyObject *lines, *buf;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "O!nO!", &PyList_Type, &lines, &pos, &PyByteArray_Type, &buf)) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(lines), rows = 0, size = 0, stamped = 0, run = 0;
    int64_t minute = -1;
    self->out.len = 0;
    for (; pos < count; pos++) {
        PyObject *item = PyList_GET_ITEM(lines, pos);
        Py_buffer view;
        const char *data;
        Py_ssize_t n;
        int rc;
        if (PyBytes_CheckExact(item)) {
            data = PyBytes_AS_STRING(item);
            n = PyBytes_GET_SIZE(item);
            rc = add_event(self, (const unsigned char *)data, n, &minute, &run, &stamped, &size);
        } else {
            if (PyObject_GetBuffer(item, &view, PyBUF_SIMPLE) < 0) goto error;
            rc = add_event(self, view.buf, view.len, &minute, &run, &stamped, &size);
            PyBuffer_Release(&view);
        }
        if (rc == ERROR) goto error;
        if (rc == STOP) break;
        rows += rc;
    }
    if (flush_minute(self, minute, run) < 0) goto error;
    Py_ssize_t old = PyByteArray_GET_SIZE(buf);
    if (self->out.len) {
        if (PyByteArray_Resize(buf, old + self->out.len) < 0) goto error;
        memcpy(PyByteArray_AS_STRING(buf) + old, self->out.data, self->out.len);
    }
    return Py_BuildValue("nnnn", pos, rows, size, stamped);
error:
    /* The rows of this call are dropped with the exception; the request fails as a whole. */
    return NULL;
}

/* ---- the type --------------------------------------------------------------------------------------------------- */

static int FastRows_init(FastRows *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"dataset_id", "arrival_us", "max_us",  "timestamp_field", "max_event_bytes",
                             "max_days",   "days",       "minutes", "shapes",          "stamped_keys",    NULL};
    int dataset_id;
    long long arrival, max_us;
    const char *field;
    Py_ssize_t field_len;
    PyObject *days, *minutes, *shapes, *stamped;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iLLs#nnO!O!O!O!", kwlist, &dataset_id, &arrival, &max_us, &field,
                                     &field_len, &self->limit, &self->max_days, &PySet_Type, &days, &PyDict_Type,
                                     &minutes, &PySet_Type, &shapes, &PySet_Type, &stamped))
        return -1;
    self->dataset_id = dataset_id;
    self->arrival_us = arrival;
    self->max_us = max_us;
    PyMem_Free(self->field);
    if (!(self->field = PyMem_Malloc(field_len + 1))) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(self->field, field, field_len + 1);
    self->field_len = field_len;
    self->last_day = -1;
    Py_INCREF(days);
    Py_XSETREF(self->days, days);
    Py_INCREF(minutes);
    Py_XSETREF(self->minutes, minutes);
    Py_INCREF(shapes);
    Py_XSETREF(self->shapes, shapes);
    Py_INCREF(stamped);
    Py_XSETREF(self->stamped_keys, stamped);
    return 0;
}

static void FastRows_dealloc(FastRows *self) {
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->days);
    Py_CLEAR(self->minutes);
    Py_CLEAR(self->shapes);
    Py_CLEAR(self->stamped_keys);
    for (int i = 0; i < CACHE_SLOTS; i++) PyMem_Free(self->slots[i].skel);
    PyMem_Free(self->field);
    PyMem_Free(self->out.data);
    PyMem_Free(self->ev.data);
    PyMem_Free(self->skel.data);
    PyMem_Free(self->path.data);
    PyMem_Free(self->sink.data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int FastRows_traverse(FastRows *self, visitproc visit, void *arg) {
    Py_VISIT(self->days);
    Py_VISIT(self->minutes);
    Py_VISIT(self->shapes);
    Py_VISIT(self->stamped_keys);
    return 0;
}

static int FastRows_clear(FastRows *self) {
    Py_CLEAR(self->days);
    Py_CLEAR(self->minutes);
    Py_CLEAR(self->shapes);
    Py_CLEAR(self->stamped_keys);
    return 0;
}

static PyMethodDef FastRows_methods[] = {
    {"add", (PyCFunction)FastRows_add, METH_VARARGS, add_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FastRowsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "app.ingest._fastrows.FastRows",
    .tp_basicsize = sizeof(FastRows),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled row builder of one request (see the module's source for what it serves).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FastRows_init,
    .tp_dealloc = (destructor)FastRows_dealloc,
    .tp_traverse = (traverseproc)FastRows_traverse,
    .tp_clear = (inquiry)FastRows_clear,
    .tp_methods = FastRows_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_fastrows", .m_size = -1};

PyMODINIT_FUNC PyInit__fastrows(void) {
    if (PyType_Ready(&FastRowsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&FastRowsType);
    if (PyModule_AddObject(m, "FastRows", (PyObject *)&FastRowsType) < 0) {
        Py_DECREF(&FastRowsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
