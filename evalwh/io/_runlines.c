/*
 * evalwh.io._runlines: read one TREC run file and rank its judged lines, as trec_eval does.
 *
 * The direct evaluation (evalwh.measures.direct, `evalwh eval --qrels QRELS RUN...`) reads every line
 * of every run file once and keeps only what the metrics need: the judged lines with their
 * ranks and running counts, and the number retrieved per topic. Reading 25 million lines
 * into Arrow and ranking them there costs more than all the metrics together, so this module
 * does that one job in C, one file per call, without the GIL (two files at once on two cores).
 *
 * It is an accelerator, not a second definition:
 *   - The ranking is trec_ranked's (schema/001_core.sql): score descending, then doc_id
 *     descending byte-wise (memcmp, a prefix before its extensions). Scores compare as
 *     doubles, or rounded to float32 on request (trec_eval <= 9.0.8).
 *   - It accepts only the plainest form of a run file: ASCII, lines of exactly six non-empty
 *     fields split by one delimiter byte (more fields only when extra fields are allowed),
 *     the file's tag in every line, a score of the form -?digits[.digits][e[+-]digits],
 *     finite, and no document twice in a topic. Anything else (a comment, an empty line, a
 *     \r, a byte outside printable ASCII, another score spelling, a duplicate) returns a
 *     reason string instead of a result, and the caller ingests that file by the ordinary
 *     path, which accepts it or names its bad line exactly as `evalwh ingest` does.
 * tests/test_runlines.py checks both halves against DuckDB: ranks against trec_ranked on
 * random files, and every score this module parses against DuckDB's DOUBLE cast.
 *
 * Python interface:
 *   judgments(topic_offsets, topic_bytes, doc_offsets, doc_bytes, grades) -> capsule
 *       The judgments to look lines up in: two Arrow string arrays (int32 offsets and their
 *       bytes) and int32 grades; a negative grade counts as unjudged.
 *   rank_file(data, delimiter, tag, judgments, rel, float32, extra_fields)
 *       -> (topic_offsets, topic_bytes, num_ret, n_relevant, topic, rank, grade,
 *           judged_so_far, relevant_so_far) | str
 *       The topic ids in order of first appearance, as an Arrow string array's buffers
 *       (int32 offsets and the bytes; no Python string is made); num_ret: int32 bytes, lines
 *       per topic; n_relevant: how many judged lines are relevant (grade >= rel); then int32
 *       bytes per judged line: topic index, rank, grade, judged lines at or above it,
 *       relevant ones at or above it. The n_relevant relevant lines come first, then the
 *       others, each part in (topic, rank) order (the evaluation stores relevant rows first,
 *       as the warehouse's cache). A str is the reason the file is not in the plain form.
 *   read_run(data, delimiter, tag, judgments | None, rel, float32, extra_fields[, max_line[,
 *            documents]])
 *       -> (judged, doc_offsets, doc_bytes, given_offsets, given_bytes, score, topic, rank,
 *           given_valid, keys, added, float32_lists, float32_first, given_rank, given_rank_valid) | str
 *       Every line ranked, for the ingest: judged is rank_file's tuple (its judged lines; none
 *       without judgments), then per row in (topic, rank) order the document id (Arrow
 *       string buffers), the rank field as written (Arrow string buffers and a validity
 *       bitmap: NULL where it is the rank's own decimal or another integer's, then in
 *       given_rank: int32 values and their validity), the score (float64), the topic's
 *       index and the rank (int32). With documents (a documents() capsule keyed by
 *       document), each row gets the key of its document instead of its id, once the whole
 *       file is accepted: keys (int64 per row); added (int32), the rows whose document was
 *       new and got the next key; the document ids are then those of the added rows only.
 *       Without, keys and added are None. float32_lists: the topics where two adjacent rows have
 *       scores that differ as doubles, are equal as floats, and doc_ids ascending (their
 *       order under trec_eval 9's float32 scores is the other); float32_first: the best rank
 *       of the second row of such a pair (0: none). The ingest stores both with the run.
 *   documents(next_key[, spill_fd, budget[, by_document]]) -> capsule
 *       A dictionary, empty: a new entry gets next_key, then the next. by_document: keyed by
 *       document id alone (read_run's: a collection's documents are stored once), else by
 *       (topic, document) pair (the judgments as grades, below). With a spill file (a
 *       descriptor of a file to read and write, duplicated), at most budget bytes of its
 *       tables stay in memory, the others in the file.
 *   documents_add(capsule, topic_offsets, topic_bytes, doc_offsets, doc_bytes, keys)
 *       Pairs and their int64 keys into a dictionary of pairs, a batch at a time.
 *   documents_add_ids(capsule, doc_offsets, doc_bytes, keys)
 *       The documents stored so far and their int64 keys into a dictionary of documents.
 *   documents_info(capsule) -> (pairs, topics, topics in memory, bytes in memory, spill bytes)
 *   Where rank_file and read_run take judgments, a documents() capsule whose keys are grades
 *   (>= 0) serves as well: the ingest's judgments, held within a budget as the dictionary is
 *   (evalwh.io.runreader.graded).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <io.h>
#include <locale.h>
#define dup _dup
#define close _close
typedef _locale_t c_locale_t;
#define new_c_locale() _create_locale(LC_NUMERIC, "C")
#define strtod_c(s, end, loc) _strtod_l((s), (end), (loc))
#else
#include <locale.h>
#include <unistd.h>
#ifdef __APPLE__
#include <xlocale.h>
#endif
typedef locale_t c_locale_t;
#define new_c_locale() newlocale(LC_NUMERIC_MASK, "C", (locale_t)0)
#define strtod_c(s, end, loc) strtod_l((s), (end), (loc))
#endif

static c_locale_t c_locale;

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)0)
#endif
#define PREFETCH_AHEAD 8
/* the longest line taken by default, in bytes without its line break (evalwh.io.formats.MAX_LINE) */
#define MAX_LINE (1 << 20)

/* -- hashing ------------------------------------------------------------------------------ */

static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_bytes(const char *p, size_t n, uint64_t seed) {
    uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ULL);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    }
    return mix64(h);
}

/* whether n bytes at a and b are equal: ids are short, and a call to memcmp costs more
 * than comparing them eight bytes at a time here */
static inline int same_bytes(const char *a, const char *b, size_t n) {
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
        a += 8;
        b += 8;
        n -= 8;
    }
    while (n--)
        if (*a++ != *b++) return 0;
    return 1;
}

/* The end of a field: the first byte at or below 0x20 from p (read_lines has checked that
 * every byte is below 0x80 and that the text ends in a NUL), eight bytes at a time while
 * eight remain before end. */
static inline const char *field_end(const char *p, const char *end) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        /* the high bit of each byte below 0x21 (exact for the lowest such byte, which is
         * the first in memory on a little-endian machine) */
        uint64_t low = (w - 0x2121212121212121ULL) & ~w & 0x8080808080808080ULL;
        if (low) return p + (__builtin_ctzll(low) >> 3);
        p += 8;
    }
#endif
    while ((unsigned char)*p > 0x20) p++;
    return p;
}

static size_t table_size(size_t n) { /* a power of two of at least 2n (and 16) */
    size_t size = 16;
    while (size < 2 * n) size <<= 1;
    return size;
}

/* -- judgments ---------------------------------------------------------------------------- */

/* Judgments are grouped by topic, each topic with its own small hash table of documents:
 * a run file is read topic by topic, so every lookup of a topic's lines hits a table of a
 * few kilobytes (one big table cost a cache miss per line). A slot holds the upper half of
 * the document's hash and where its record is (offset / 8 + 1), so a probe touches a record
 * only when the hashes agree. A record is the doc id's length and grade, then its bytes,
 * padded to 8: one cache line to fetch, which rank_topics asks for ahead of time. A topic's
 * table is at most two thirds full (judged_table_size) and the table of topics grows with the
 * topics: on 2.7 M judgments of 5,000 topics (the shared bench's XL) the tables take 39 MiB
 * instead of the 77 MiB (and 32 MiB of topics' slots) of tables half empty or more, sized
 * by the number of judgments. */

typedef struct {
    const char *doc;
    uint32_t doc_len;
    int32_t grade;
} Judgment;

typedef struct {
    const char *text;
    uint32_t len;
    size_t count;       /* its judgments */
    size_t record0;     /* where its records begin in Judgments.records */
    size_t slot0, mask; /* its slots: slots[slot0 .. slot0 + mask] */
} JudgedTopic;

typedef struct {
    char *text; /* the topic ids, back to back */
    char *records;
    JudgedTopic *topics;
    size_t topic_count;
    uint32_t *topic_slots; /* topic index + 1, 0 = empty */
    size_t topic_mask;
    uint64_t *slots;
} Judgments;

#define HIGH_HALF 0xFFFFFFFF00000000ULL

static void judgments_release(Judgments *j) {
    if (j == NULL) return;
    free(j->text);
    free(j->records);
    free(j->topics);
    free(j->topic_slots);
    free(j->slots);
    free(j);
}

static void judgments_free(PyObject *capsule) {
    judgments_release(PyCapsule_GetPointer(capsule, "evalwh.io._runlines.judgments"));
}

/* the slot of a topic in j->topic_slots: where it is, or the empty slot where it would go */
static size_t topic_slot(const Judgments *j, const char *text, uint32_t len) {
    size_t slot = hash_bytes(text, len, 0) & j->topic_mask;
    for (;;) {
        uint32_t at = j->topic_slots[slot];
        if (at == 0) return slot;
        const JudgedTopic *t = &j->topics[at - 1];
        if (t->len == len && same_bytes(t->text, text, len)) return slot;
        slot = (slot + 1) & j->topic_mask;
    }
}

static const JudgedTopic *judged_topic(const Judgments *j, const char *text, uint32_t len) {
    uint32_t at = j->topic_slots[topic_slot(j, text, len)];
    return at ? &j->topics[at - 1] : NULL;
}

static inline size_t record_size(uint32_t len) { return 8 + (((size_t)len + 7) & ~(size_t)7); }

static size_t judged_table_size(size_t n) { /* a power of two of at least 3n/2 (and 16) */
    size_t size = 16;
    while (size < n + n / 2) size <<= 1;
    return size;
}

/* the table of topics twice as large, once it is half full (0 if out of memory) */
static int judged_topics_grow(Judgments *j) {
    size_t size = 2 * (j->topic_mask + 1);
    uint32_t *old = j->topic_slots;
    if ((j->topic_slots = calloc(size, sizeof(uint32_t))) == NULL) {
        j->topic_slots = old;
        return 0;
    }
    j->topic_mask = size - 1;
    for (size_t t = 0; t < j->topic_count; t++)
        j->topic_slots[topic_slot(j, j->topics[t].text, j->topics[t].len)] = (uint32_t)(t + 1);
    free(old);
    return 1;
}

static inline const char *record_at(const Judgments *j, uint64_t entry) {
    return j->records + (size_t)((uint32_t)entry - 1) * 8;
}

/* the grade of a document of topic t (hash: hash_bytes(doc, len, 0)), -1 if unjudged */
static int32_t grade_of(const Judgments *j, const JudgedTopic *t, const char *doc, uint32_t len,
                        uint64_t hash) {
    const uint64_t *slots = j->slots + t->slot0;
    size_t slot = hash & t->mask;
    for (;;) {
        uint64_t entry = slots[slot];
        if (entry == 0) return -1;
        if ((entry & HIGH_HALF) == (hash & HIGH_HALF)) {
            const char *record = record_at(j, entry);
            uint32_t record_len;
            int32_t grade;
            memcpy(&record_len, record, 4);
            memcpy(&grade, record + 4, 4);
            if (record_len == len && same_bytes(record + 8, doc, len)) return grade;
        }
        slot = (slot + 1) & t->mask;
    }
}

static PyObject *build_judgments(const Py_buffer *, const Py_buffer *, const Py_buffer *, const Py_buffer *,
                                 const int32_t *, size_t);

/* string i of an Arrow string array: offsets (int32) and bytes */
static const char *arrow_string(const Py_buffer *offsets, const Py_buffer *data, size_t i, uint32_t *len) {
    const int32_t *at = offsets->buf;
    *len = (uint32_t)(at[i + 1] - at[i]);
    return (const char *)data->buf + at[i];
}

static int arrow_strings_ok(const Py_buffer *offsets, const Py_buffer *data, size_t n) {
    if ((size_t)offsets->len < (n + 1) * sizeof(int32_t)) return 0;
    const int32_t *at = offsets->buf;
    for (size_t i = 0; i < n; i++)
        if (at[i] < 0 || at[i + 1] < at[i] || (Py_ssize_t)at[i + 1] > data->len) return 0;
    return 1;
}

static PyObject *judgments(PyObject *self, PyObject *args) {
    Py_buffer buffers[5]; /* topic offsets, topic bytes, doc offsets, doc bytes, grades */
    memset(buffers, 0, sizeof buffers);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*:judgments", &buffers[0], &buffers[1], &buffers[2], &buffers[3],
                          &buffers[4]))
        return NULL;
    PyObject *result = NULL;
    size_t n = (size_t)buffers[4].len / sizeof(int32_t);
    const int32_t *grade_at = buffers[4].buf;
    if (!arrow_strings_ok(&buffers[0], &buffers[1], n) || !arrow_strings_ok(&buffers[2], &buffers[3], n)) {
        PyErr_SetString(PyExc_ValueError, "the id buffers do not match the grades");
        goto out;
    }
    if (n >= UINT32_MAX / 4) {
        PyErr_SetString(PyExc_OverflowError, "too many judgments");
        goto out;
    }
    result = build_judgments(&buffers[0], &buffers[1], &buffers[2], &buffers[3], grade_at, n);
out:
    for (int i = 0; i < 5; i++) PyBuffer_Release(&buffers[i]);
    return result;
}

static PyObject *build_judgments(const Py_buffer *topic_offsets, const Py_buffer *topic_data,
                                 const Py_buffer *doc_offsets, const Py_buffer *doc_data, const int32_t *grade_at,
                                 size_t n) {
    size_t bytes = (size_t)topic_data->len;
    size_t size = 1024; /* topics' slots, grown (judged_topics_grow) */
    Judgments *j = calloc(1, sizeof(Judgments));
    uint32_t *topic_of = malloc(sizeof(uint32_t) * ((size_t)n + 1));
    Judgment *unsorted = malloc(sizeof(Judgment) * ((size_t)n + 1));
    if (j == NULL || topic_of == NULL || unsorted == NULL || (j->text = malloc(bytes + 1)) == NULL ||
        (j->topics = calloc((size_t)n + 1, sizeof(JudgedTopic))) == NULL ||
        (j->topic_slots = calloc(size, sizeof(uint32_t))) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    j->topic_mask = size - 1;
    /* the judgments with their topics, topics numbered in order of appearance */
    char *at = j->text;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a, b;
        const char *topic = arrow_string(topic_offsets, topic_data, i, &a);
        const char *doc = arrow_string(doc_offsets, doc_data, i, &b);
        int32_t grade = grade_at[i];
        if (grade < 0) continue; /* a negative grade counts as unjudged */
        size_t slot = topic_slot(j, topic, a);
        if (j->topic_slots[slot] == 0 && 2 * (j->topic_count + 1) > j->topic_mask + 1) {
            if (!judged_topics_grow(j)) {
                PyErr_NoMemory();
                goto fail;
            }
            slot = topic_slot(j, topic, a);
        }
        if (j->topic_slots[slot] == 0) {
            JudgedTopic *t = &j->topics[j->topic_count];
            memcpy(at, topic, (size_t)a);
            t->text = at;
            t->len = a;
            at += a;
            j->topic_slots[slot] = (uint32_t)(++j->topic_count);
        }
        topic_of[count] = j->topic_slots[slot] - 1;
        j->topics[topic_of[count]].count++;
        j->topics[topic_of[count]].record0 += record_size(b); /* its bytes, for now */
        unsorted[count++] = (Judgment){doc, b, grade};
    }
    /* records grouped by topic, then each topic's table */
    size_t slots = 0, records = 0;
    for (size_t t = 0; t < j->topic_count; t++) {
        JudgedTopic *topic = &j->topics[t];
        size_t topic_bytes = topic->record0;
        topic->record0 = records;
        records += topic_bytes;
        topic->slot0 = slots;
        topic->mask = judged_table_size(topic->count) - 1;
        slots += topic->mask + 1;
    }
    if (records / 8 >= UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "judgments of more than 32 GB");
        goto fail;
    }
    if ((j->slots = calloc(slots ? slots : 1, sizeof(uint64_t))) == NULL ||
        (j->records = calloc(records ? records : 8, 1)) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        JudgedTopic *topic = &j->topics[topic_of[i]];
        const Judgment *r = &unsorted[i];
        uint64_t hash = hash_bytes(r->doc, r->doc_len, 0);
        if (grade_of(j, topic, r->doc, r->doc_len, hash) >= 0) {
            PyObject *t = PyUnicode_DecodeUTF8(topic->text, topic->len, "replace");
            PyObject *d = PyUnicode_DecodeUTF8(r->doc, r->doc_len, "replace");
            if (t && d) PyErr_Format(PyExc_ValueError, "topic %U, document %U is judged twice", t, d);
            Py_XDECREF(t);
            Py_XDECREF(d);
            goto fail;
        }
        char *record = j->records + topic->record0;
        memcpy(record, &r->doc_len, 4);
        memcpy(record + 4, &r->grade, 4);
        memcpy(record + 8, r->doc, r->doc_len);
        uint64_t *table = j->slots + topic->slot0;
        size_t slot = hash & topic->mask;
        while (table[slot]) slot = (slot + 1) & topic->mask;
        table[slot] = (hash & HIGH_HALF) | (uint64_t)(topic->record0 / 8 + 1);
        topic->record0 += record_size(r->doc_len); /* (the next record's place; unused after) */
    }
    free(topic_of);
    free(unsorted);
    PyObject *capsule = PyCapsule_New(j, "evalwh.io._runlines.judgments", judgments_free);
    if (capsule != NULL) return capsule;
    judgments_release(j);
    return NULL;
fail:
    free(topic_of);
    free(unsorted);
    judgments_release(j);
    return NULL;
}

/* -- documents: document -> key, or (topic, document) -> key ------------------------------ */

/* The dictionary the ingest keys run lines in: a collection's documents and their keys
 * (documents.doc_key, schema/026_document_keys.sql), grown while run files are read: the
 * ingest stores a key per run line instead of the document id. Its tables are kept as a
 * dictionary of (topic, document) pairs keeps them (the judgments as grades use one, below),
 * each "topic" its own table; keyed by document, the topics are DOC_BUCKETS buckets of ids by
 * hash (doc_bucket). A slot (32 bits) holds where a record is in the table's record array
 * (offset + 1), and a table is at most two thirds full. A record is the id's length (one
 * byte; 255 and four more bytes from 255 on), its key (8 bytes), then the id's bytes,
 * unpadded: 21 bytes for an id of 12, so that an entry takes about 33 bytes in memory (a
 * record, the slack of its array, a slot and a half). A probe reads the record it points to,
 * asked for ahead of time (key_rows). A lock makes one read_run at a time add to it.
 *
 * A dictionary can outgrow memory (the shared bench's XL holds 33.9 M (topic, document) pairs,
 * 1.3 GB, though only 528,155 documents, 22 MB), so it keeps at most `budget` bytes of tables in
 * memory when it has a spill file: past that, the table used last goes to the file and is freed,
 * and comes back when a batch needs it again (a run file is keyed a bucket, or a topic, at a
 * time, so that each is read back at most once a file). Records only grow, so only those added
 * since it was last written go to the file, after the others in the table's region (a region
 * has room for twice the records it was made for; a table that outgrows it gets a new one); the
 * slots are not written but made again from the records when the table comes back. Without a
 * spill file everything stays in memory, as for any dictionary below the budget. */

typedef struct {
    char *text; /* the topic id (own copy) */
    uint32_t len;
    uint32_t *slots; /* record offset + 1, 0: empty; NULL while spilled */
    size_t mask, count;
    char *records; /* NULL while spilled */
    size_t record_bytes, record_cap;
    int resident;                  /* slots and records in memory */
    long long spill_at, spill_cap; /* its records' region in the spill file (spill_at < 0: none) */
    size_t written;                /* bytes of its records in the region */
    int pins;                      /* read_run calls looking grades up in it (graded_pin): not spilled */
} DocTopic;

typedef struct {
    DocTopic *topics;
    size_t topic_count, topic_cap;
    uint32_t *topic_slots; /* topic index + 1 */
    size_t topic_mask;
    int64_t next_key;
    PyThread_type_lock lock;
    int fd;                 /* the spill file (a duplicate descriptor), or -1 */
    size_t budget;          /* bytes of tables in memory before topics are spilled */
    size_t resident_bytes;  /* bytes of tables in memory */
    long long spill_end;    /* the spill file's used length */
    int error;              /* errno of a failed read or write of the spill file */
    size_t *queue;          /* the topics in memory, the one read or made last at the end (a ring) */
    size_t queue_head, queue_len, queue_cap;
    int by_document;        /* keyed by document alone: the "topics" are DOC_BUCKETS buckets of ids */
} Documents;

static inline size_t doc_record_size(uint32_t len) { return (len < 255 ? 1 : 5) + 8 + (size_t)len; }

/* a record's id length into *len; returns where its key is (its id follows the key) */
static inline const char *doc_record_key(const char *record, uint32_t *len) {
    uint8_t first = (uint8_t)record[0];
    if (first < 255) {
        *len = first;
        return record + 1;
    }
    memcpy(len, record + 1, 4);
    return record + 5;
}

/* write a record at out: the id's length, the key, the id */
static inline void doc_record_write(char *out, const char *doc, uint32_t len, int64_t key) {
    if (len < 255) {
        *out++ = (char)(uint8_t)len;
    } else {
        *out++ = (char)255;
        memcpy(out, &len, 4);
        out += 4;
    }
    memcpy(out, &key, 8);
    memcpy(out + 8, doc, len);
}

static inline size_t doc_topic_bytes(const DocTopic *t) { return (t->mask + 1) * sizeof(uint32_t) + t->record_cap; }

/* whether a table of mask + 1 slots is too full for count records (at most two thirds) */
static inline int doc_table_full(size_t count, size_t mask) { return 3 * count > 2 * (mask + 1); }

static void documents_release(Documents *d) {
    if (d == NULL) return;
    for (size_t t = 0; t < d->topic_count; t++) {
        free(d->topics[t].text);
        free(d->topics[t].slots);
        free(d->topics[t].records);
    }
    free(d->topics);
    free(d->topic_slots);
    free(d->queue);
    if (d->fd >= 0) close(d->fd);
    if (d->lock) PyThread_free_lock(d->lock);
    free(d);
}

static void documents_free(PyObject *capsule) {
    documents_release(PyCapsule_GetPointer(capsule, "evalwh.io._runlines.documents"));
}

/* n bytes at offset of the spill file into or from buf; 0 (errno in d->error) on failure */
static int spill_io(Documents *d, char *buf, size_t n, long long offset, int writing) {
    while (n > 0) {
        size_t step = n < (1u << 30) ? n : (1u << 30);
#ifdef _WIN32
        long long done = -1;
        if (_lseeki64(d->fd, offset, SEEK_SET) >= 0)
            done = writing ? _write(d->fd, buf, (unsigned)step) : _read(d->fd, buf, (unsigned)step);
#else
        ssize_t done = writing ? pwrite(d->fd, buf, step, (off_t)offset) : pread(d->fd, buf, step, (off_t)offset);
#endif
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) {
            d->error = done < 0 ? errno : EIO;
            return 0;
        }
        buf += done;
        n -= (size_t)done;
        offset += done;
    }
    return 1;
}

/* a topic in memory joins the queue's end; 0 on memory failure */
static int doc_queue_push(Documents *d, size_t topic) {
    if (d->queue_len == d->queue_cap) {
        size_t cap = d->queue_cap ? 2 * d->queue_cap : 64;
        size_t *grown = malloc(cap * sizeof(size_t));
        if (!grown) return 0;
        for (size_t i = 0; i < d->queue_len; i++) grown[i] = d->queue[(d->queue_head + i) % d->queue_cap];
        free(d->queue);
        d->queue = grown;
        d->queue_cap = cap;
        d->queue_head = 0;
    }
    d->queue[(d->queue_head + d->queue_len++) % d->queue_cap] = topic;
    return 1;
}

/* write topic t's records not yet in the spill file there, and free its table and records */
static int doc_spill(Documents *d, DocTopic *t) {
    if (t->spill_at < 0 || (long long)t->record_bytes > t->spill_cap) { /* a new region, with room to grow */
        t->spill_at = d->spill_end;
        t->spill_cap = 2 * (long long)t->record_bytes + 4096;
        d->spill_end += t->spill_cap;
        t->written = 0;
    }
    if (t->record_bytes > t->written &&
        !spill_io(d, t->records + t->written, t->record_bytes - t->written, t->spill_at + (long long)t->written, 1))
        return 0;
    t->written = t->record_bytes;
    d->resident_bytes -= doc_topic_bytes(t);
    free(t->slots);
    free(t->records);
    t->slots = NULL;
    t->records = NULL;
    t->record_cap = 0;
    t->resident = 0;
    return 1;
}

/* spill the topics used last, but `keep`, while the tables in memory hold more than the budget */
static int doc_trim(Documents *d, size_t keep) {
    if (d->fd < 0) return 1;
    while (d->resident_bytes > d->budget && d->queue_len > 0) {
        size_t topic = d->queue[(d->queue_head + d->queue_len - 1) % d->queue_cap];
        if (topic == keep || d->topics[topic].pins) break;
        d->queue_len--;
        if (!doc_spill(d, &d->topics[topic])) return 0;
    }
    return 1;
}

/* topic t's records read back from the spill file, and its table made from them; 0 on failure */
static int doc_resident(Documents *d, size_t topic) {
    DocTopic *t = &d->topics[topic];
    if (t->resident) return 1;
    t->record_cap = t->record_bytes ? t->record_bytes : 8;
    if ((t->slots = calloc(t->mask + 1, sizeof(uint32_t))) == NULL || (t->records = malloc(t->record_cap)) == NULL ||
        !spill_io(d, t->records, t->record_bytes, t->spill_at, 0)) {
        free(t->slots);
        free(t->records);
        t->slots = NULL;
        t->records = NULL;
        t->record_cap = 0;
        return 0;
    }
    for (size_t at = 0; at < t->record_bytes;) {
        uint32_t len;
        const char *key = doc_record_key(t->records + at, &len);
        size_t slot = hash_bytes(key + 8, len, 0) & t->mask;
        while (t->slots[slot]) slot = (slot + 1) & t->mask;
        t->slots[slot] = (uint32_t)(at + 1);
        at += doc_record_size(len);
    }
    t->resident = 1;
    d->resident_bytes += doc_topic_bytes(t);
    return doc_queue_push(d, topic);
}

/* the topic's index, added if new, its table in memory; SIZE_MAX on failure */
static size_t doc_topic(Documents *d, const char *text, uint32_t len) {
    size_t slot = hash_bytes(text, len, 0) & d->topic_mask;
    for (;;) {
        uint32_t at = d->topic_slots[slot];
        if (at == 0) break;
        const DocTopic *t = &d->topics[at - 1];
        if (t->len == len && same_bytes(t->text, text, len)) return doc_resident(d, at - 1) ? at - 1 : SIZE_MAX;
        slot = (slot + 1) & d->topic_mask;
    }
    if (d->topic_count == d->topic_cap) {
        size_t cap = d->topic_cap ? 2 * d->topic_cap : 64;
        DocTopic *grown = realloc(d->topics, cap * sizeof(DocTopic));
        if (!grown) return SIZE_MAX;
        d->topics = grown;
        d->topic_cap = cap;
    }
    DocTopic *t = &d->topics[d->topic_count];
    memset(t, 0, sizeof *t);
    if ((t->text = malloc(len ? len : 1)) == NULL || (t->slots = calloc(16, sizeof(uint32_t))) == NULL) {
        free(t->text);
        return SIZE_MAX;
    }
    memcpy(t->text, text, len);
    t->len = len;
    t->mask = 15;
    t->resident = 1;
    t->spill_at = -1;
    d->resident_bytes += doc_topic_bytes(t);
    d->topic_slots[slot] = (uint32_t)(++d->topic_count);
    if (!doc_queue_push(d, d->topic_count - 1)) return SIZE_MAX;
    if (2 * d->topic_count > d->topic_mask) { /* grow and rehash the topic table */
        size_t mask = 2 * d->topic_mask + 1;
        uint32_t *grown = calloc(mask + 1, sizeof(uint32_t));
        if (!grown) return SIZE_MAX;
        for (size_t i = 0; i < d->topic_count; i++) {
            size_t at = hash_bytes(d->topics[i].text, d->topics[i].len, 0) & mask;
            while (grown[at]) at = (at + 1) & mask;
            grown[at] = (uint32_t)i + 1;
        }
        free(d->topic_slots);
        d->topic_slots = grown;
        d->topic_mask = mask;
    }
    return d->topic_count - 1;
}

static inline const char *doc_record(const DocTopic *t, uint32_t entry) { return t->records + (entry - 1); }

/* A dictionary keyed by document alone (documents(..., by_document=1), the ingest's: a
 * collection's document names are stored once, schema/026_document_keys.sql) has no topics:
 * its ids are spread over DOC_BUCKETS tables by the top bits of their hash (the slots use the
 * low bits), each a "topic" whose id is one byte, the bucket's number. The buckets are what
 * the budget spills and reads back, as a pair dictionary's topics: a batch of ids is sorted
 * into buckets first (doc_buckets), so that each bucket it needs is in memory once. XL's
 * 528,155 documents take about 22 MB, far below the budget; a collection whose documents
 * outgrow it still stays within it. */
#define DOC_BUCKET_BITS 6
#define DOC_BUCKETS (1u << DOC_BUCKET_BITS)

static inline unsigned doc_bucket_of(uint64_t hash) { return (unsigned)(hash >> (64 - DOC_BUCKET_BITS)); }

/* bucket b's table, in memory (made if new); SIZE_MAX on failure */
static size_t doc_bucket(Documents *d, unsigned b) {
    char text = (char)b;
    return doc_topic(d, &text, 1);
}

/* bucket b's index among the topics, or SIZE_MAX if it was never made */
static size_t doc_bucket_found(const Documents *d, unsigned b) {
    char text = (char)b;
    size_t slot = hash_bytes(&text, 1, 0) & d->topic_mask;
    for (;;) {
        uint32_t at = d->topic_slots[slot];
        if (at == 0) return SIZE_MAX;
        const DocTopic *t = &d->topics[at - 1];
        if (t->len == 1 && t->text[0] == text) return at - 1;
        slot = (slot + 1) & d->topic_mask;
    }
}

/* the n items' positions sorted by bucket into order (n entries), and each bucket's first
 * position into start (DOC_BUCKETS + 1 entries): a counting sort, stable */
static void doc_buckets(const uint64_t *hashes, size_t n, uint32_t *order, size_t *start) {
    size_t fill[DOC_BUCKETS];
    memset(start, 0, (DOC_BUCKETS + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) start[doc_bucket_of(hashes[i]) + 1]++;
    for (unsigned b = 0; b < DOC_BUCKETS; b++) start[b + 1] += start[b];
    memcpy(fill, start, sizeof fill);
    for (size_t i = 0; i < n; i++) order[fill[doc_bucket_of(hashes[i])]++] = (uint32_t)i;
}

/* the key of a document of topic t (in memory; hash: hash_bytes(doc, len, 0)); -1 if absent */
static int64_t doc_key_of(const DocTopic *t, const char *doc, uint32_t len, uint64_t hash) {
    size_t slot = hash & t->mask;
    for (;;) {
        uint32_t entry = t->slots[slot];
        if (entry == 0) return -1;
        uint32_t record_len;
        const char *at = doc_record_key(doc_record(t, entry), &record_len);
        if (record_len == len && same_bytes(at + 8, doc, len)) {
            int64_t key;
            memcpy(&key, at, 8);
            return key;
        }
        slot = (slot + 1) & t->mask;
    }
}

/* add a document (known to be absent) to topic t (in memory) with this key; 0 on memory failure */
static int doc_add(Documents *d, DocTopic *t, const char *doc, uint32_t len, uint64_t hash, int64_t key) {
    size_t size = doc_record_size(len);
    if (t->record_bytes + size >= UINT32_MAX) return 0; /* (a slot holds an offset of 32 bits) */
    if (t->record_bytes + size > t->record_cap) {  /* (grown by half: less slack than doubling) */
        size_t cap = t->record_cap ? t->record_cap + t->record_cap / 2 : 256;
        while (cap < t->record_bytes + size) cap += cap / 2;
        char *grown = realloc(t->records, cap);
        if (!grown) return 0;
        d->resident_bytes += cap - t->record_cap;
        t->records = grown;
        t->record_cap = cap;
    }
    if (doc_table_full(t->count + 1, t->mask)) { /* grow and rehash the topic's table */
        size_t mask = 2 * t->mask + 1;
        uint32_t *grown = calloc(mask + 1, sizeof(uint32_t));
        if (!grown) return 0;
        for (size_t i = 0; i <= t->mask; i++) {
            uint32_t entry = t->slots[i];
            if (!entry) continue;
            uint32_t record_len;
            const char *key_at = doc_record_key(doc_record(t, entry), &record_len);
            size_t at = hash_bytes(key_at + 8, record_len, 0) & mask;
            while (grown[at]) at = (at + 1) & mask;
            grown[at] = entry;
        }
        free(t->slots);
        d->resident_bytes += (mask - t->mask) * sizeof(uint32_t);
        t->slots = grown;
        t->mask = mask;
    }
    doc_record_write(t->records + t->record_bytes, doc, len, key);
    size_t slot = hash & t->mask;
    while (t->slots[slot]) slot = (slot + 1) & t->mask;
    t->slots[slot] = (uint32_t)(t->record_bytes + 1);
    t->record_bytes += size;
    t->count++;
    return 1;
}

static Documents *documents_of(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, "evalwh.io._runlines.documents");
}

/* set the exception of a failed dictionary operation: the spill file's error, or no memory */
static void *documents_failed(Documents *d) {
    if (d != NULL && d->error) {
        errno = d->error;
        d->error = 0;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyErr_NoMemory();
}

/* -- graded judgments: a dictionary whose keys are grades --------------------------------- */

/* The ingest's judgments are a dictionary (documents() filled by documents_add) whose key of
 * a (topic, document) pair is its grade: the same tables, the same budget and spill file, so
 * that the judgments held do not grow with the collection either. Built once, before any run
 * file is read, and only read after: two read_run calls (two threads) look grades up in it
 * at once, each topic pinned while its lines are looked up, so that neither spills a table
 * the other reads. No topic is added after the build, so d->topics does not move. */

/* topic text's index in d (SIZE_MAX in *at if it has no judgments), its table in memory and
 * pinned; 0 on failure (the spill file's error in d->error, else no memory) */
static int graded_pin(Documents *d, const char *text, uint32_t len, size_t *at) {
    int ok = 1;
    *at = SIZE_MAX;
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    size_t slot = hash_bytes(text, len, 0) & d->topic_mask;
    for (uint32_t found; (found = d->topic_slots[slot]) != 0; slot = (slot + 1) & d->topic_mask) {
        DocTopic *t = &d->topics[found - 1];
        if (t->len == len && same_bytes(t->text, text, len)) {
            ok = doc_resident(d, found - 1);
            if (ok) {
                t->pins++;
                *at = found - 1;
            }
            break;
        }
    }
    PyThread_release_lock(d->lock);
    return ok;
}

/* unpin topic at (graded_pin), and spill what is past the budget; 0 on failure */
static int graded_unpin(Documents *d, size_t at) {
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    d->topics[at].pins--;
    int ok = doc_trim(d, SIZE_MAX);
    PyThread_release_lock(d->lock);
    return ok;
}

/* documents(next_key[, spill_fd, budget[, by_document]]) -> capsule: an empty dictionary whose
 * new entries get keys from next_key; with a spill file (a descriptor, duplicated), at most
 * budget bytes of tables in memory. by_document: keyed by document alone (read_run's), else by
 * (topic, document) pair (the judgments as grades). */
static PyObject *documents(PyObject *self, PyObject *args) {
    long long next_key;
    int fd = -1, by_document = 0;
    Py_ssize_t budget = 0;
    if (!PyArg_ParseTuple(args, "L|inp:documents", &next_key, &fd, &budget, &by_document)) return NULL;
    if (fd >= 0 && budget < 0) {
        PyErr_SetString(PyExc_ValueError, "the budget must not be negative");
        return NULL;
    }
    Documents *d = calloc(1, sizeof(Documents));
    if (d == NULL) return PyErr_NoMemory();
    d->fd = -1;
    if ((d->topic_slots = calloc(256, sizeof(uint32_t))) == NULL || (d->lock = PyThread_allocate_lock()) == NULL) {
        documents_release(d);
        return PyErr_NoMemory();
    }
    if (fd >= 0 && (d->fd = dup(fd)) < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        documents_release(d);
        return NULL;
    }
    d->topic_mask = 255;
    d->next_key = next_key;
    d->budget = (size_t)budget;
    d->by_document = by_document;
    PyObject *result = PyCapsule_New(d, "evalwh.io._runlines.documents", documents_free);
    if (result == NULL) documents_release(d);
    return result;
}

/* documents_add(capsule, topic_offsets, topic_bytes, doc_offsets, doc_bytes, keys) -> None:
 * stored pairs (Arrow string buffers with int32 offsets, int64 keys) into the dictionary, a
 * batch at a time; a pair already in it is an error. */
static PyObject *documents_add(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer buffers[5];
    memset(buffers, 0, sizeof buffers);
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*:documents_add", &capsule, &buffers[0], &buffers[1], &buffers[2],
                          &buffers[3], &buffers[4]))
        return NULL;
    PyObject *result = NULL;
    Documents *d = documents_of(capsule);
    size_t n = (size_t)buffers[4].len / sizeof(int64_t);
    const int64_t *keys = buffers[4].buf;
    if (d == NULL) goto out;
    if (d->by_document) {
        PyErr_SetString(PyExc_ValueError, "a dictionary of documents takes documents_add_ids");
        goto out;
    }
    if (!arrow_strings_ok(&buffers[0], &buffers[1], n) || !arrow_strings_ok(&buffers[2], &buffers[3], n)) {
        PyErr_SetString(PyExc_ValueError, "the id buffers do not match the keys");
        goto out;
    }
    int ok = 1, twice = 0;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    size_t current = SIZE_MAX;
    for (size_t i = 0; i < n && ok; i++) {
        uint32_t a, b;
        const char *topic = arrow_string(&buffers[0], &buffers[1], i, &a);
        const char *doc = arrow_string(&buffers[2], &buffers[3], i, &b);
        if (current == SIZE_MAX || d->topics[current].len != a || !same_bytes(d->topics[current].text, topic, a)) {
            if (current != SIZE_MAX && !doc_trim(d, SIZE_MAX)) { /* (the last topic may go too) */
                ok = 0;
                break;
            }
            current = doc_topic(d, topic, a);
        }
        if (current == SIZE_MAX) {
            ok = 0;
            break;
        }
        uint64_t hash = hash_bytes(doc, b, 0);
        if (doc_key_of(&d->topics[current], doc, b, hash) >= 0) {
            twice = 1;
            break;
        }
        ok = doc_add(d, &d->topics[current], doc, b, hash, keys[i]);
    }
    if (ok && !twice) ok = doc_trim(d, SIZE_MAX);
    PyThread_release_lock(d->lock);
    Py_END_ALLOW_THREADS
    if (twice)
        PyErr_SetString(PyExc_ValueError, "a document is stored twice for a topic");
    else if (!ok)
        documents_failed(d);
    else
        Py_INCREF(Py_None), result = Py_None;
out:
    for (int i = 0; i < 5; i++) PyBuffer_Release(&buffers[i]);
    return result;
}

/* documents_add_ids(capsule, doc_offsets, doc_bytes, keys) -> None: stored documents (Arrow
 * string buffers with int32 offsets, int64 keys) into a dictionary of documents, a batch at a
 * time, bucket by bucket; a document already in it is an error. */
static PyObject *documents_add_ids(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer buffers[3];
    memset(buffers, 0, sizeof buffers);
    if (!PyArg_ParseTuple(args, "Oy*y*y*:documents_add_ids", &capsule, &buffers[0], &buffers[1], &buffers[2]))
        return NULL;
    PyObject *result = NULL;
    uint64_t *hashes = NULL;
    uint32_t *order = NULL;
    Documents *d = documents_of(capsule);
    size_t n = (size_t)buffers[2].len / sizeof(int64_t);
    const int64_t *keys = buffers[2].buf;
    if (d == NULL) goto out;
    if (!d->by_document) {
        PyErr_SetString(PyExc_ValueError, "a dictionary of pairs takes documents_add");
        goto out;
    }
    if (!arrow_strings_ok(&buffers[0], &buffers[1], n) || n > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "the id buffers do not match the keys");
        goto out;
    }
    if ((hashes = malloc((n ? n : 1) * sizeof(uint64_t))) == NULL || (order = malloc((n ? n : 1) * sizeof(uint32_t))) == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    int ok = 1, twice = 0;
    Py_BEGIN_ALLOW_THREADS
    size_t start[DOC_BUCKETS + 1];
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        const char *doc = arrow_string(&buffers[0], &buffers[1], i, &b);
        hashes[i] = hash_bytes(doc, b, 0);
    }
    doc_buckets(hashes, n, order, start);
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    for (unsigned bucket = 0; bucket < DOC_BUCKETS && ok && !twice; bucket++) {
        if (start[bucket] == start[bucket + 1]) continue;
        size_t at = doc_bucket(d, bucket);
        if (at == SIZE_MAX) {
            ok = 0;
            break;
        }
        for (size_t j = start[bucket]; j < start[bucket + 1]; j++) {
            size_t i = order[j];
            uint32_t b;
            const char *doc = arrow_string(&buffers[0], &buffers[1], i, &b);
            if (doc_key_of(&d->topics[at], doc, b, hashes[i]) >= 0) {
                twice = 1;
                break;
            }
            if (!(ok = doc_add(d, &d->topics[at], doc, b, hashes[i], keys[i]))) break;
        }
        if (ok && !twice) ok = doc_trim(d, SIZE_MAX);
    }
    PyThread_release_lock(d->lock);
    Py_END_ALLOW_THREADS
    if (twice)
        PyErr_SetString(PyExc_ValueError, "a document is stored twice");
    else if (!ok)
        documents_failed(d);
    else
        Py_INCREF(Py_None), result = Py_None;
out:
    free(hashes);
    free(order);
    for (int i = 0; i < 3; i++) PyBuffer_Release(&buffers[i]);
    return result;
}

/* documents_info(capsule) -> (pairs, topics, topics in memory, bytes in memory, spill file bytes) */
static PyObject *documents_info(PyObject *self, PyObject *capsule) {
    Documents *d = documents_of(capsule);
    if (d == NULL) return NULL;
    size_t pairs = 0, resident = 0;
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    for (size_t t = 0; t < d->topic_count; t++) {
        pairs += d->topics[t].count;
        resident += d->topics[t].resident;
    }
    PyObject *result = Py_BuildValue("(nnnnL)", (Py_ssize_t)pairs, (Py_ssize_t)d->topic_count, (Py_ssize_t)resident,
                                     (Py_ssize_t)d->resident_bytes, d->spill_end);
    PyThread_release_lock(d->lock);
    return result;
}

/* -- scores ------------------------------------------------------------------------------- */

static const double powers_of_ten[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                         1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                         1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Parse -?digits[.digits][(e|E)[+-]digits] into *out; 0 when s is not of that form or not
 * finite. The value is the correctly rounded double, as DuckDB's cast gives: exactly by
 * Clinger's fast path when the digits fit in 2^53 and the power of ten is exact, else by
 * strtod in the C locale (correctly rounded in glibc, musl and macOS's libc). */
static int parse_score(const char *s, size_t n, double *out) {
    size_t i = 0;
    int negative = 0;
    if (i < n && s[i] == '-') {
        negative = 1;
        i++;
    }
    uint64_t mantissa = 0;
    int digits = 0, significant = 0, scale = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (significant || s[i] != '0') {
            if (significant < 19) mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
            else scale++;
            significant++;
        }
    }
    if (i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            if (significant || s[i] != '0') {
                if (significant < 19) {
                    mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
                    scale--;
                }
                significant++;
            } else {
                scale--;
            }
        }
    }
    if (digits == 0) return 0;
    long exponent = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int minus = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) minus = s[i++] == '-';
        size_t start = i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (exponent < 100000) exponent = exponent * 10 + (s[i] - '0');
        if (i == start) return 0;
        if (minus) exponent = -exponent;
    }
    if (i != n) return 0;
    double value;
    long power = exponent + scale;
    if (mantissa == 0) {
        value = 0.0;
    } else if (significant <= 19 && mantissa <= (1ULL << 53) && power >= -22 && power <= 22) {
        value = power < 0 ? (double)mantissa / powers_of_ten[-power] : (double)mantissa * powers_of_ten[power];
    } else {
        char buffer[128];
        if (n >= sizeof buffer) return 0;
        memcpy(buffer, s, n);
        buffer[n] = '\0';
        value = strtod_c(buffer, NULL, c_locale);
        if (!isfinite(value)) return 0;
        *out = value;
        return 1;
    }
    *out = negative ? -value : value;
    return isfinite(*out);
}

/* -- ranking ------------------------------------------------------------------------------ */

typedef struct {
    const char *doc; /* the rank field as written follows it, after one delimiter byte */
    double key;
    uint64_t hash;
    uint32_t doc_len;
    uint32_t given_len;
    uint32_t topic;
    int32_t grade;
} Line;

typedef struct {
    const char *text;
    uint32_t len;
    uint32_t count;
} Topic;

/* a growable array of int32 */
typedef struct {
    int32_t *data;
    size_t len, cap;
} Ints;

/* judged lines, a column each */
typedef struct {
    Ints topic, rank, grade, judged, relevant;
} Rows;

/* room for cap values: pages of the array are touched (and cost) only as values come */
static int ints_reserve(Ints *a, size_t cap) {
    if (cap <= a->cap) return 1;
    int32_t *data = realloc(a->data, cap * sizeof(int32_t));
    if (data == NULL) return 0;
    a->data = data;
    a->cap = cap;
    return 1;
}

static int ints_push(Ints *a, int32_t v) {
    if (a->len == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 1024;
        int32_t *data = realloc(a->data, cap * sizeof(int32_t));
        if (data == NULL) return 0;
        a->data = data;
        a->cap = cap;
    }
    a->data[a->len++] = v;
    return 1;
}

static int doc_compare(const Line *a, const Line *b) {
    uint32_t n = a->doc_len < b->doc_len ? a->doc_len : b->doc_len;
    int c = memcmp(a->doc, b->doc, n);
    if (c) return c;
    return (a->doc_len > b->doc_len) - (a->doc_len < b->doc_len);
}

/* trec_ranked's order: key descending, then doc descending */
static int rank_compare(const void *pa, const void *pb) {
    const Line *a = *(const Line *const *)pa, *b = *(const Line *const *)pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return -doc_compare(a, b);
}

typedef struct {
    /* in */
    const char *data;
    size_t size;
    char delimiter;
    const char *tag;
    size_t tag_len;
    const Judgments *judgments;
    Documents *graded; /* or the judgments as a dictionary of grades (graded_pin) */
    int graded_failed; /* its spill file failed (or memory) */
    long rel;
    int float32, extra_fields;
    int all_rows;    /* read_run: rank every line fully and emit them all */
    size_t max_line; /* the longest line taken, in bytes without its line break */
    /* out */
    const char *refused;
    size_t doc_bytes, given_bytes; /* totals over all lines, for read_run's buffers */
    /* read_run's rows, in (topic, rank) order, written into buffers made before ranking */
    int32_t *out_doc_offsets, *out_given_offsets, *out_topic, *out_rank;
    uint8_t *out_given_valid; /* Arrow validity of rank_given: set where it differs from the rank
                               * and is no integer's own decimal (those go to out_given_rank) */
    int32_t *out_given_rank;         /* the rank as given where it differs and is an integer's own decimal */
    uint8_t *out_given_rank_valid;   /* ... and where it is (Arrow validity) */
    char *out_doc, *out_given; /* out_doc NULL: the rows are keyed instead (key_rows) */
    double *out_score;
    Documents *documents; /* read_run's dictionary of (topic, document) pairs, or NULL */
    int64_t *out_key;     /* ... and every row's key in it */
    Ints added;           /* ... and the rows that added a pair, in row order */
    /* read_run: the lists where two adjacent rows trade places when scores are rounded to
     * float32 (trec_eval <= 9.0.8), and the best rank (from 1; 0: none) where it happens */
    size_t float32_lists;
    int32_t float32_first;
    Topic *topics;
    size_t topic_count;
    Rows rows[2]; /* the judged lines: [0] relevant ones (grade >= rel), [1] the others */
    /* work */
    Line *lines;
    size_t line_count;
    Line **order;
    uint64_t *slots; /* the duplicate check's table: hash's upper half | line + 1 */
} Work;

static void work_free(Work *w) {
    free(w->topics);
    for (int k = 0; k < 2; k++) {
        free(w->rows[k].topic.data);
        free(w->rows[k].rank.data);
        free(w->rows[k].grade.data);
        free(w->rows[k].judged.data);
        free(w->rows[k].relevant.data);
    }
    free(w->lines);
    free(w->order);
    free(w->slots);
    free(w->added.data);
}

#define REFUSE(why)         \
    do {                    \
        w->refused = (why); \
        return 0;           \
    } while (0)

/* Split the text into lines and fields, check them, and give each line its topic index and
 * sort key. Returns 0 with w->refused set, or on memory failure with w->refused NULL. */
static int read_lines(Work *w) {
    const char *s = w->data, *end = w->data + w->size;
    /* as many lines as line breaks, and one without: the array is never grown (copied) */
    size_t lines_cap = 1, topics_cap = 64, topic_mask = 255;
    for (const char *at = s; (at = memchr(at, '\n', (size_t)(end - at))) != NULL; at++) lines_cap++;
    w->lines = malloc(lines_cap * sizeof(Line));
    w->topics = malloc(topics_cap * sizeof(Topic));
    uint32_t *topic_slots = calloc(topic_mask + 1, sizeof(uint32_t));
    int ok = 0;
    if (!w->lines || !w->topics || !topic_slots) goto done;
    /* every byte printable ASCII, the delimiter or a newline (one pass the compiler
     * vectorises). A space in a tab-separated file counts as another byte: the ingest would
     * split there (any whitespace separates fields), so the ingest decides. */
    int bad = 0;
    for (size_t i = 0; i < w->size; i++) {
        unsigned char c = (unsigned char)w->data[i];
        bad |= !(((unsigned char)(c - 0x21) <= 0x7e - 0x21) | (c == '\n') | (c == (unsigned char)w->delimiter));
    }
    if (bad) {
        w->refused = "a byte other than printable ASCII and the delimiter";
        goto done;
    }
    /* Now every byte of a field is above 0x20 and every other byte (the delimiter, a newline,
     * the NUL that ends a bytes object's buffer) is at most 0x20: one comparison a byte finds
     * the end of a field. */
    uint32_t current = UINT32_MAX; /* the previous line's topic */
    while (s < end) {
        const char *field[6];
        size_t length[6];
        int count = 0;
        const char *line_start = s;
        if (*s == '#') {
            w->refused = "a comment";
            goto done;
        }
        for (;;) {
            const char *next = field_end(s, end);
            if (next == s) {
                w->refused = count == 0 && *s != w->delimiter ? "an empty line" : "an empty field";
                goto done;
            }
            if (count < 6) {
                field[count] = s;
                length[count] = (size_t)(next - s);
            }
            count++;
            s = next + (next < end); /* past the delimiter or newline; the last line may end without one */
            if (*next != w->delimiter) break;
        }
        /* s is past the line break, if the line has one */
        if ((size_t)(s - line_start) - (s[-1] == '\n') > w->max_line) {
            w->refused = "a line longer than the limit";
            goto done;
        }
        if (count < 6 || (count > 6 && !w->extra_fields)) {
            w->refused = "a line of other than six fields";
            goto done;
        }
        if (length[5] != w->tag_len || !same_bytes(field[5], w->tag, w->tag_len)) {
            w->refused = "another tag";
            goto done;
        }
        double score;
        if (!parse_score(field[4], length[4], &score)) {
            w->refused = "a score of another form";
            goto done;
        }
        if (length[0] >= UINT32_MAX || length[2] >= UINT32_MAX) {
            w->refused = "a field of 4 GB";
            goto done;
        }
        /* the topic: the previous line's, or found (or added) in the file's topic table */
        uint32_t topic_len = (uint32_t)length[0];
        if (current == UINT32_MAX || w->topics[current].len != topic_len ||
            !same_bytes(w->topics[current].text, field[0], topic_len)) {
            uint64_t h = hash_bytes(field[0], topic_len, 0);
            size_t slot = h & topic_mask;
            for (;;) {
                uint32_t at = topic_slots[slot];
                if (at == 0) break;
                Topic *t = &w->topics[at - 1];
                if (t->len == topic_len && same_bytes(t->text, field[0], topic_len)) break;
                slot = (slot + 1) & topic_mask;
            }
            if (topic_slots[slot]) {
                current = topic_slots[slot] - 1;
            } else {
                if (w->topic_count == topics_cap) {
                    topics_cap *= 2;
                    Topic *grown = realloc(w->topics, topics_cap * sizeof(Topic));
                    if (!grown) goto done;
                    w->topics = grown;
                }
                current = (uint32_t)w->topic_count++;
                w->topics[current] = (Topic){field[0], topic_len, 0};
                topic_slots[slot] = current + 1;
                if (2 * w->topic_count > topic_mask) { /* grow and rehash the topic table */
                    size_t mask = 2 * topic_mask + 1;
                    uint32_t *grown = calloc(mask + 1, sizeof(uint32_t));
                    if (!grown) goto done;
                    for (size_t t = 0; t < w->topic_count; t++) {
                        size_t at = hash_bytes(w->topics[t].text, w->topics[t].len, 0) & mask;
                        while (grown[at]) at = (at + 1) & mask;
                        grown[at] = (uint32_t)t + 1;
                    }
                    free(topic_slots);
                    topic_slots = grown;
                    topic_mask = mask;
                }
            }
        }
        if (w->line_count == lines_cap) {
            lines_cap *= 2;
            Line *grown = realloc(w->lines, lines_cap * sizeof(Line));
            if (!grown) goto done;
            w->lines = grown;
        }
        if (w->line_count >= INT32_MAX) {
            w->refused = "more than 2^31 lines";
            goto done;
        }
        Line *line = &w->lines[w->line_count++];
        line->doc = field[2];
        line->doc_len = (uint32_t)length[2];
        line->given_len = (uint32_t)length[3];
        w->doc_bytes += length[2];
        w->given_bytes += length[3];
        line->topic = current;
        /* trec_eval 9's float: a finite double of magnitude >= 2^128 - 2^103 rounds to an
         * infinity (IEEE 754, C Annex F), as the schema's float32_score (021, 022) maps it */
        line->key = w->float32 ? (double)(float)score : score;
        w->topics[current].count++;
    }
    ok = 1;
done:
    free(topic_slots);
    return ok;
}

/* Whether n bytes at s are an int32's own decimal (as C's printf("%d") writes it: no sign but a
 * minus, no leading zero, no "-0"), its value into *out: what run_rows keeps as given_rank
 * (schema/026_document_keys.sql; SQL's CAST(TRY_CAST(s AS INTEGER) AS VARCHAR) = s). */
static int integer_text(const char *s, uint32_t n, int32_t *out) {
    uint32_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    if (i >= n || n - i > 10 || (s[i] == '0' && (n - i > 1 || i == 1))) return 0;
    int64_t value = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        value = value * 10 + (s[i] - '0');
    }
    if (s[0] == '-') value = -value;
    if (value < INT32_MIN || value > INT32_MAX) return 0;
    *out = (int32_t)value;
    return 1;
}

/* the decimal digits of v into out (no sign, no terminator); their number */
static int decimal_of(uint32_t v, char *out) {
    char digits[12];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int k = 0; k < n; k++) out[k] = digits[n - 1 - k];
    return n;
}

/* Rank each topic's lines; look every line up in the judgments; refuse a duplicate document.
 * Emits the judged lines in (topic, rank) order with their running counts. */
static int rank_topics(Work *w) {
    size_t n = w->line_count, largest = 0, pinned = SIZE_MAX;
    w->order = malloc((n ? n : 1) * sizeof(Line *));
    size_t *offset = malloc((w->topic_count + 1) * sizeof(size_t));
    int ok = 0;
    if (!w->order || !offset) goto done;
    /* the judged rows are at most the lines: room for them all, so that no array is copied */
    for (int k = 0; k < 2; k++) {
        Rows *rows = &w->rows[k];
        if (!ints_reserve(&rows->topic, n) || !ints_reserve(&rows->rank, n) || !ints_reserve(&rows->grade, n) ||
            !ints_reserve(&rows->judged, n) || !ints_reserve(&rows->relevant, n))
            goto done;
    }
    /* group the lines by topic, keeping file order within a topic (a counting sort) */
    offset[0] = 0;
    for (size_t t = 0; t < w->topic_count; t++) {
        offset[t + 1] = offset[t] + w->topics[t].count;
        if (w->topics[t].count > largest) largest = w->topics[t].count;
    }
    size_t *next = malloc((w->topic_count + 1) * sizeof(size_t));
    if (!next) goto done;
    memcpy(next, offset, (w->topic_count + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) w->order[next[w->lines[i].topic]++] = &w->lines[i];
    free(next);
    size_t size = table_size(largest);
    w->slots = malloc(size * sizeof(uint64_t));
    if (!w->slots) goto done;

    for (size_t t = 0; t < w->topic_count; t++) {
        Line **group = w->order + offset[t];
        size_t count = w->topics[t].count, mask = table_size(count) - 1;
        const Topic *topic = &w->topics[t];
        const JudgedTopic *judged_here = w->judgments ? judged_topic(w->judgments, topic->text, topic->len) : NULL;
        const uint64_t *judged_slots = judged_here ? w->judgments->slots + judged_here->slot0 : NULL;
        size_t judged_mask = judged_here ? judged_here->mask : 0;
        const DocTopic *graded_here = NULL;
        const uint32_t *graded_slots = NULL;
        if (w->graded != NULL) {
            if (!graded_pin(w->graded, topic->text, topic->len, &pinned)) {
                w->graded_failed = 1;
                goto done;
            }
            if (pinned != SIZE_MAX) {
                graded_here = &w->graded->topics[pinned];
                graded_slots = graded_here->slots;
                judged_mask = graded_here->mask;
            }
        }
        memset(w->slots, 0, (mask + 1) * sizeof(uint64_t));
        int sorted = 1, judged_tie = 0;
        for (size_t i = 0; i < count; i++) group[i]->hash = hash_bytes(group[i]->doc, group[i]->doc_len, 0);
        for (size_t i = 0; i < count; i++) {
            Line *line = group[i];
            /* the judgments are far away in memory: ask for a line's slot 2 * PREFETCH_AHEAD
             * lines ahead, and for the record it points to PREFETCH_AHEAD lines ahead */
            if (judged_slots != NULL) {
                if (i + 2 * PREFETCH_AHEAD < count)
                    PREFETCH(judged_slots + (group[i + 2 * PREFETCH_AHEAD]->hash & judged_mask));
                if (i + PREFETCH_AHEAD < count) {
                    uint64_t entry = judged_slots[group[i + PREFETCH_AHEAD]->hash & judged_mask];
                    if (entry) PREFETCH(record_at(w->judgments, entry));
                }
            } else if (graded_slots != NULL) {
                if (i + 2 * PREFETCH_AHEAD < count)
                    PREFETCH(graded_slots + (group[i + 2 * PREFETCH_AHEAD]->hash & judged_mask));
                if (i + PREFETCH_AHEAD < count) {
                    uint32_t entry = graded_slots[group[i + PREFETCH_AHEAD]->hash & judged_mask];
                    if (entry) PREFETCH(doc_record(graded_here, entry));
                }
            }
            size_t slot = line->hash & mask;
            for (;;) { /* a document twice in the topic is refused */
                uint64_t entry = w->slots[slot];
                if (entry == 0) break;
                if ((entry & HIGH_HALF) == (line->hash & HIGH_HALF)) {
                    const Line *other = group[(uint32_t)entry - 1];
                    if (other->doc_len == line->doc_len && same_bytes(other->doc, line->doc, line->doc_len)) {
                        w->refused = "a document twice in a topic";
                        goto done;
                    }
                }
                slot = (slot + 1) & mask;
            }
            w->slots[slot] = (line->hash & HIGH_HALF) | ((uint64_t)i + 1);
            if (judged_here)
                line->grade = grade_of(w->judgments, judged_here, line->doc, line->doc_len, line->hash);
            else
                line->grade = graded_here ? (int32_t)doc_key_of(graded_here, line->doc, line->doc_len, line->hash) : -1;
            if (i > 0) {
                if (line->key > group[i - 1]->key) sorted = 0;
                else if (line->key == group[i - 1]->key && (line->grade >= 0 || group[i - 1]->grade >= 0))
                    judged_tie = 1;
            }
        }
        if (pinned != SIZE_MAX) { /* its grades are all looked up */
            size_t at = pinned;
            pinned = SIZE_MAX;
            if (!graded_unpin(w->graded, at)) {
                w->graded_failed = 1;
                goto done;
            }
        }
        if (!sorted) {
            qsort(group, count, sizeof(Line *), rank_compare);
        } else if (judged_tie || w->all_rows) {
            /* in file order already but for ties: order each tie group that holds a judged
             * line by doc descending (the others' order changes no judged rank) */
            size_t a = 0;
            while (a < count) {
                size_t b = a + 1, judged = group[a]->grade >= 0;
                while (b < count && group[b]->key == group[a]->key) judged |= group[b++]->grade >= 0;
                if (b - a > 1 && (judged || w->all_rows)) qsort(group + a, b - a, sizeof(Line *), rank_compare);
                a = b;
            }
        }
        if (w->all_rows) {
            size_t first = offset[t];
            int traded = 0; /* this list has a pair that float32 scores order the other way */
            for (size_t i = 0; i < count; i++) {
                const Line *line = group[i];
                size_t row = first + i;
                /* two adjacent lines whose scores differ as doubles but not as floats tie in
                 * trec_eval 9, which then orders them doc_id descending: they trade places
                 * when doc_id ascends here (queries/reports/float32_order.sql's pairs) */
                if (!traded && i > 0) {
                    const Line *above = group[i - 1];
                    if (above->key != line->key && (float)above->key == (float)line->key &&
                        doc_compare(above, line) < 0) {
                        traded = 1;
                        w->float32_lists++;
                        if (w->float32_first == 0 || (int32_t)i + 1 < w->float32_first) w->float32_first = (int32_t)i + 1;
                    }
                }
                int32_t given_at = w->out_given_offsets[row];
                if (w->out_doc != NULL) {
                    int32_t doc_at = w->out_doc_offsets[row];
                    memcpy(w->out_doc + doc_at, line->doc, line->doc_len);
                    w->out_doc_offsets[row + 1] = doc_at + (int32_t)line->doc_len;
                }
                /* the rank as given only where it is not the rank's own decimal (else NULL): as
                 * an integer where it is another integer's own decimal, else as text */
                const char *given = line->doc + line->doc_len + 1;
                char decimal[12];
                int decimal_len = decimal_of((uint32_t)(i + 1), decimal);
                if ((int)line->given_len != decimal_len || memcmp(given, decimal, (size_t)decimal_len) != 0) {
                    int32_t number;
                    if (integer_text(given, line->given_len, &number)) {
                        w->out_given_rank[row] = number;
                        w->out_given_rank_valid[row >> 3] |= (uint8_t)(1u << (row & 7));
                    } else {
                        memcpy(w->out_given + given_at, given, line->given_len);
                        given_at += (int32_t)line->given_len;
                        w->out_given_valid[row >> 3] |= (uint8_t)(1u << (row & 7));
                    }
                }
                w->out_given_offsets[row + 1] = given_at;
                w->out_score[row] = line->key;
                w->out_topic[row] = (int32_t)t;
                w->out_rank[row] = (int32_t)i + 1;
            }
        }
        int32_t judged = 0, relevant = 0;
        for (size_t i = 0; i < count; i++) {
            const Line *line = group[i];
            if (line->grade < 0) continue;
            judged++;
            relevant += line->grade >= w->rel;
            Rows *rows = &w->rows[line->grade >= w->rel ? 0 : 1];
            if (!ints_push(&rows->topic, (int32_t)t) || !ints_push(&rows->rank, (int32_t)i + 1) ||
                !ints_push(&rows->grade, line->grade) || !ints_push(&rows->judged, judged) ||
                !ints_push(&rows->relevant, relevant))
                goto done;
        }
    }
    ok = 1;
done:
    if (pinned != SIZE_MAX && !graded_unpin(w->graded, pinned)) w->graded_failed = 1;
    free(offset);
    return ok;
}

/* Give every row (read_run's order) the key of its document in w->documents (a dictionary of
 * documents), adding the documents it lacks with the next keys (their rows into w->added).
 * Called only once the file is accepted whole: every key given is of a document the ingest
 * then stores. The rows are taken bucket by bucket (doc_buckets; the lines' hashes are
 * rank_topics'), so that a bucket is in memory once per file; its table is far away in
 * memory, so a row's slot is asked for 2 * PREFETCH_AHEAD rows ahead and its record
 * PREFETCH_AHEAD ahead. Returns 0 on memory failure. */
/* Whether a file's lines can be keyed in their own order (key_rows_in_order): every bucket's
 * table is in memory, and stays within the budget whatever the file adds. What a file adds
 * is at most a record a line (its id and 13 bytes) in arrays grown by half, and tables of
 * slots doubled: three times the records' bytes and three slots a line bound it, and a
 * growth step of the tables already there at most half their bytes. */
static int keyable_in_order(const Documents *d, const Work *w) {
    if (d->fd < 0) return 1; /* (no spill file: everything stays in memory) */
    for (size_t t = 0; t < d->topic_count; t++)
        if (!d->topics[t].resident) return 0;
    size_t n = w->line_count, growth = 3 * (w->doc_bytes + 13 * n) + 3 * sizeof(uint32_t) * n;
    return d->resident_bytes + d->resident_bytes / 2 + growth <= d->budget;
}

/* key_rows for a dictionary wholly in memory (keyable_in_order): the rows in their order,
 * each looked up in its bucket's table, the probes asked for ahead of time. The rows of a
 * topic are near each other in the text, so that reading them in their order costs less
 * than sorting them by bucket first (on the shared bench's XL, about a quarter of the
 * keying's time). New documents get keys in row order. */
static int key_rows_in_order(Work *w) {
    Documents *d = w->documents;
    size_t n = w->line_count;
    DocTopic *table[DOC_BUCKETS] = {NULL}; /* the buckets made so far (a new one is made when needed) */
    for (unsigned bucket = 0; bucket < DOC_BUCKETS; bucket++) {
        size_t at = doc_bucket_found(d, bucket);
        if (at != SIZE_MAX) table[bucket] = &d->topics[at];
    }
    for (size_t i = 0; i < n; i++) {
        if (i + 2 * PREFETCH_AHEAD < n) {
            uint64_t hash = w->order[i + 2 * PREFETCH_AHEAD]->hash;
            const DocTopic *t = table[doc_bucket_of(hash)];
            if (t) PREFETCH(t->slots + (hash & t->mask));
        }
        if (i + PREFETCH_AHEAD < n) {
            uint64_t hash = w->order[i + PREFETCH_AHEAD]->hash;
            const DocTopic *t = table[doc_bucket_of(hash)];
            uint32_t entry = t ? t->slots[hash & t->mask] : 0;
            if (entry) PREFETCH(doc_record(t, entry));
        }
        const Line *line = w->order[i];
        unsigned bucket = doc_bucket_of(line->hash);
        if (table[bucket] == NULL) { /* a new bucket: d->topics may move */
            if (doc_bucket(d, bucket) == SIZE_MAX) return 0;
            for (unsigned b = 0; b < DOC_BUCKETS; b++) {
                size_t at = doc_bucket_found(d, b);
                table[b] = at == SIZE_MAX ? NULL : &d->topics[at];
            }
        }
        DocTopic *here = table[bucket];
        int64_t key = doc_key_of(here, line->doc, line->doc_len, line->hash);
        if (key < 0) {
            key = d->next_key++;
            if (!doc_add(d, here, line->doc, line->doc_len, line->hash, key) || !ints_push(&w->added, (int32_t)i))
                return 0;
        }
        w->out_key[i] = key;
    }
    return doc_trim(d, SIZE_MAX);
}

static int key_rows(Work *w) {
    Documents *d = w->documents;
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    int in_order = keyable_in_order(d, w);
    if (in_order) {
        int ok = key_rows_in_order(w);
        PyThread_release_lock(d->lock);
        return ok;
    }
    PyThread_release_lock(d->lock);
    size_t n = w->line_count, start[DOC_BUCKETS + 1];
    uint64_t *hashes = malloc((n ? n : 1) * sizeof(uint64_t));
    uint32_t *order = malloc((n ? n : 1) * sizeof(uint32_t));
    if (hashes == NULL || order == NULL) {
        free(hashes);
        free(order);
        return 0;
    }
    for (size_t i = 0; i < n; i++) hashes[i] = w->order[i]->hash;
    doc_buckets(hashes, n, order, start);
    free(hashes);
    int ok = 1;
    PyThread_acquire_lock(d->lock, WAIT_LOCK);
    for (unsigned bucket = 0; bucket < DOC_BUCKETS && ok; bucket++) {
        size_t from = start[bucket], to = start[bucket + 1];
        if (from == to) continue;
        size_t at = doc_bucket(d, bucket);
        if (at == SIZE_MAX) {
            ok = 0;
            break;
        }
        DocTopic *here = &d->topics[at]; /* (only doc_topic moves d->topics) */
        for (size_t j = from; j < to; j++) {
            if (j + 2 * PREFETCH_AHEAD < to) PREFETCH(here->slots + (w->order[order[j + 2 * PREFETCH_AHEAD]]->hash & here->mask));
            if (j + PREFETCH_AHEAD < to) {
                uint32_t entry = here->slots[w->order[order[j + PREFETCH_AHEAD]]->hash & here->mask];
                if (entry) PREFETCH(doc_record(here, entry));
            }
            size_t i = order[j];
            const Line *line = w->order[i];
            int64_t key = doc_key_of(here, line->doc, line->doc_len, line->hash);
            if (key < 0) {
                key = d->next_key++;
                if (!doc_add(d, here, line->doc, line->doc_len, line->hash, key) || !ints_push(&w->added, (int32_t)i)) {
                    ok = 0;
                    break;
                }
            }
            w->out_key[i] = key;
        }
        if (ok) ok = doc_trim(d, SIZE_MAX); /* (past the budget, the buckets used longest ago go) */
    }
    PyThread_release_lock(d->lock);
    free(order);
    return ok;
}

static PyObject *ints_bytes(const Ints *a) {
    return PyBytes_FromStringAndSize((const char *)a->data, (Py_ssize_t)(a->len * sizeof(int32_t)));
}

/* a column of the judged lines: the relevant ones' values, then the others' */
static PyObject *rows_bytes(const Ints *relevant, const Ints *others) {
    size_t a = relevant->len * sizeof(int32_t), b = others->len * sizeof(int32_t);
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(a + b));
    if (bytes == NULL) return NULL;
    if (a) memcpy(PyBytes_AS_STRING(bytes), relevant->data, a);
    if (b) memcpy(PyBytes_AS_STRING(bytes) + a, others->data, b);
    return bytes;
}

/* The topics, their line counts and the judged rows of a ranked file, as rank_file returns them. */
static PyObject *judged_result(Work *w) {
    /* the topic ids as an Arrow string array's buffers: int32 offsets, then the bytes */
    size_t bytes = 0;
    for (size_t t = 0; t < w->topic_count; t++) bytes += w->topics[t].len;
    if (bytes > INT32_MAX) return PyUnicode_FromString("topic ids of more than 2 GB");
    Ints offsets = {malloc((w->topic_count + 1) * sizeof(int32_t)), 0, w->topic_count + 1};
    Ints counts = {malloc((w->topic_count + 1) * sizeof(int32_t)), 0, w->topic_count + 1};
    PyObject *names = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)bytes);
    if (offsets.data == NULL || counts.data == NULL || names == NULL) {
        free(offsets.data);
        free(counts.data);
        Py_XDECREF(names);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    char *at = PyBytes_AS_STRING(names);
    offsets.data[offsets.len++] = 0;
    for (size_t t = 0; t < w->topic_count; t++) {
        memcpy(at, w->topics[t].text, w->topics[t].len);
        at += w->topics[t].len;
        offsets.data[offsets.len++] = (int32_t)(at - PyBytes_AS_STRING(names));
        counts.data[counts.len++] = (int32_t)w->topics[t].count;
    }
    const Rows *r = w->rows;
    PyObject *result = Py_BuildValue(
        "(NNNnNNNNN)", ints_bytes(&offsets), names, ints_bytes(&counts), (Py_ssize_t)r[0].topic.len,
        rows_bytes(&r[0].topic, &r[1].topic), rows_bytes(&r[0].rank, &r[1].rank), rows_bytes(&r[0].grade, &r[1].grade),
        rows_bytes(&r[0].judged, &r[1].judged), rows_bytes(&r[0].relevant, &r[1].relevant));
    free(offsets.data);
    free(counts.data);
    return result;
}

/* Parse rank_file's and read_run's shared arguments into w (read_run's documents capsule, if
 * the format takes it, into *documents); 0 with an exception set if bad. */
static int work_args(Work *w, PyObject *args, const char *format, PyObject **data, Py_ssize_t *max_line,
                     PyObject **documents) {
    const char *delimiter, *tag;
    Py_ssize_t delimiter_len, tag_len;
    PyObject *capsule;
    long rel;
    int float32, extra_fields;
    if (!PyArg_ParseTuple(args, format, &PyBytes_Type, data, &delimiter, &delimiter_len, &tag, &tag_len, &capsule,
                          &rel, &float32, &extra_fields, max_line, documents))
        return 0;
    if (capsule != Py_None && PyCapsule_IsValid(capsule, "evalwh.io._runlines.documents")) {
        w->graded = PyCapsule_GetPointer(capsule, "evalwh.io._runlines.documents");
    } else if (capsule != Py_None) {
        w->judgments = PyCapsule_GetPointer(capsule, "evalwh.io._runlines.judgments");
        if (w->judgments == NULL) return 0;
    }
    if (delimiter_len != 1 || (delimiter[0] != ' ' && delimiter[0] != '\t')) {
        PyErr_SetString(PyExc_ValueError, "the delimiter is one space or one tab");
        return 0;
    }
    if (*max_line < 1) {
        PyErr_SetString(PyExc_ValueError, "max_line must be positive");
        return 0;
    }
    w->data = PyBytes_AS_STRING(*data); /* NUL-terminated, which read_lines relies on */
    w->size = (size_t)PyBytes_GET_SIZE(*data);
    w->delimiter = delimiter[0];
    w->tag = tag;
    w->tag_len = (size_t)tag_len;
    w->rel = rel;
    w->float32 = float32;
    w->extra_fields = extra_fields;
    w->max_line = (size_t)*max_line;
    return 1;
}

/* the result of a failed read_lines or rank_topics: the reason the file is refused, or the
 * exception of a failure (the graded judgments' spill file, or no memory) */
static PyObject *work_failed(Work *w) {
    if (w->refused) return PyUnicode_FromString(w->refused);
    return w->graded_failed ? documents_failed(w->graded) : PyErr_NoMemory();
}

static PyObject *rank_file(PyObject *self, PyObject *args) {
    PyObject *data;
    Py_ssize_t max_line = MAX_LINE;
    Work w;
    memset(&w, 0, sizeof w);
    PyObject *result = NULL;
    if (!work_args(&w, args, "O!s#s#Olpp|n:rank_file", &data, &max_line, NULL)) goto out;
    if (w.judgments == NULL && w.graded == NULL) {
        PyErr_SetString(PyExc_TypeError, "rank_file needs judgments");
        goto out;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = read_lines(&w) && rank_topics(&w);
    Py_END_ALLOW_THREADS
    if (!ok) {
        result = work_failed(&w);
        goto out;
    }
    if (w.line_count == 0) {
        result = PyUnicode_FromString("no lines");
        goto out;
    }
    result = judged_result(&w);
out:
    work_free(&w);
    return result;
}

/* The document ids of the rows in w->added, as an Arrow string array's buffers. */
static int added_ids(const Work *w, PyObject **offsets, PyObject **bytes) {
    size_t n = w->added.len, total = 0;
    for (size_t j = 0; j < n; j++) total += w->order[w->added.data[j]]->doc_len;
    if (total > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "new document ids of more than 2 GB");
        return 0;
    }
    if ((*offsets = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((n + 1) * 4))) == NULL ||
        (*bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total)) == NULL)
        return 0;
    int32_t *at = (int32_t *)PyBytes_AS_STRING(*offsets);
    char *text = PyBytes_AS_STRING(*bytes);
    at[0] = 0;
    for (size_t j = 0; j < n; j++) {
        const Line *line = w->order[w->added.data[j]];
        memcpy(text + at[j], line->doc, line->doc_len);
        at[j + 1] = at[j] + (int32_t)line->doc_len;
    }
    return 1;
}

static PyObject *read_run(PyObject *self, PyObject *args) {
    PyObject *data, *capsule = Py_None;
    Py_ssize_t max_line = MAX_LINE;
    Work w;
    memset(&w, 0, sizeof w);
    PyObject *result = NULL, *out[12] = {NULL};
    if (!work_args(&w, args, "O!s#s#Olpp|nO:read_run", &data, &max_line, &capsule)) goto out;
    if (w.float32) {
        PyErr_SetString(PyExc_ValueError, "read_run keeps scores as they are: float32 is not for it");
        goto out;
    }
    if (capsule != Py_None && (w.documents = PyCapsule_GetPointer(capsule, "evalwh.io._runlines.documents")) == NULL)
        goto out;
    if (w.documents != NULL && !w.documents->by_document) {
        PyErr_SetString(PyExc_ValueError, "read_run keys rows in a dictionary of documents (by_document)");
        goto out;
    }
    w.all_rows = 1;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = read_lines(&w);
    Py_END_ALLOW_THREADS
    if (!ok) {
        result = work_failed(&w);
        goto out;
    }
    if (w.line_count == 0) {
        result = PyUnicode_FromString("no lines");
        goto out;
    }
    if (w.doc_bytes > INT32_MAX || w.given_bytes > INT32_MAX) {
        result = PyUnicode_FromString("document ids of more than 2 GB");
        goto out;
    }
    size_t n = w.line_count;
    /* doc offsets, doc bytes (both made after keying, when keyed), given offsets, given bytes,
     * scores, topics, ranks, given validity, keys (when keyed), (9: added, below), given ranks
     * and their validity */
    int keyed = w.documents != NULL;
    size_t sizes[12] = {(n + 1) * 4, w.doc_bytes, (n + 1) * 4, w.given_bytes, n * 8, n * 4, n * 4, (n + 7) / 8, n * 8,
                        0, n * 4, (n + 7) / 8};
    for (int k = 0; k < 12; k++) {
        if ((keyed ? k < 2 : k == 8) || k == 9) continue;
        if ((out[k] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizes[k])) == NULL) goto out;
    }
    w.out_given_valid = (uint8_t *)PyBytes_AS_STRING(out[7]);
    memset(w.out_given_valid, 0, sizes[7]);
    w.out_given_rank = (int32_t *)PyBytes_AS_STRING(out[10]);
    memset(w.out_given_rank, 0, sizes[10]);
    w.out_given_rank_valid = (uint8_t *)PyBytes_AS_STRING(out[11]);
    memset(w.out_given_rank_valid, 0, sizes[11]);
    if (!keyed) {
        w.out_doc_offsets = (int32_t *)PyBytes_AS_STRING(out[0]);
        w.out_doc = PyBytes_AS_STRING(out[1]);
        w.out_doc_offsets[0] = 0;
    } else {
        w.out_key = (int64_t *)PyBytes_AS_STRING(out[8]);
    }
    w.out_given_offsets = (int32_t *)PyBytes_AS_STRING(out[2]);
    w.out_given = PyBytes_AS_STRING(out[3]);
    w.out_score = (double *)PyBytes_AS_STRING(out[4]);
    w.out_topic = (int32_t *)PyBytes_AS_STRING(out[5]);
    w.out_rank = (int32_t *)PyBytes_AS_STRING(out[6]);
    w.out_given_offsets[0] = 0;
    Py_BEGIN_ALLOW_THREADS
    ok = rank_topics(&w);
    Py_END_ALLOW_THREADS
    if (!ok) {
        result = work_failed(&w);
        goto out;
    }
    PyObject *judged = judged_result(&w);
    if (judged == NULL) goto out;
    if (!PyTuple_Check(judged)) { /* a reason */
        result = judged;
        goto out;
    }
    if (keyed) { /* the file is accepted: now its keys */
        Py_BEGIN_ALLOW_THREADS
        ok = key_rows(&w);
        Py_END_ALLOW_THREADS
        if (!ok || !added_ids(&w, &out[0], &out[1]) || (out[9] = ints_bytes(&w.added)) == NULL) {
            if (!ok) documents_failed(w.documents);
            Py_DECREF(judged);
            goto out;
        }
    } else {
        Py_INCREF(Py_None);
        out[8] = Py_None;
        Py_INCREF(Py_None);
        out[9] = Py_None;
    }
    result = Py_BuildValue("(NNNNNNNNNNNnnNN)", judged, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
                           out[8], out[9], (Py_ssize_t)w.float32_lists, (Py_ssize_t)w.float32_first, out[10], out[11]);
    for (int k = 0; k < 12; k++) out[k] = NULL; /* the tuple holds them, or they are released */
out:
    for (int k = 0; k < 12; k++) Py_XDECREF(out[k]);
    work_free(&w);
    return result;
}

/* The number of the first line (from 1) longer than max_line bytes without its line break, or 0. */
static PyObject *first_long_line(PyObject *self, PyObject *args) {
    Py_buffer data;
    Py_ssize_t max_line;
    if (!PyArg_ParseTuple(args, "y*n:first_long_line", &data, &max_line)) return NULL;
    const char *s = data.buf, *end = s + data.len;
    Py_ssize_t number = 0, found = 0;
    Py_BEGIN_ALLOW_THREADS
    while (s < end) {
        number++;
        const char *newline = memchr(s, '\n', (size_t)(end - s));
        const char *stop = newline ? newline : end;
        Py_ssize_t length = stop - s;
        if (length > 0 && stop[-1] == '\r' && newline) length--;
        if (length > max_line) {
            found = number;
            break;
        }
        s = newline ? newline + 1 : end;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return PyLong_FromSsize_t(found);
}

/* control_bytes(data) -> bool: whether data holds a control character that no id may hold
 * (evalwh.io.printable.FILE_CONTROL): a C0 byte other than the separators and line breaks
 * (tab, \n, \v, \f, \r) and NUL (refused on its own), DEL, or in UTF-8 a C1 character
 * (\xc2\x80-\xc2\x9f), Arabic letter mark (\xd8\x9c), a direction mark, override or isolate
 * or a line or paragraph separator (\xe2\x80\x8e-\x8f, \xe2\x80\xa8-\xae, \xe2\x81\xa6-\xa9).
 * One pass the compiler vectorises finds the single bytes and the lead bytes of those
 * sequences; only a file holding such a lead byte gets the exact second pass. For
 * evalwh.io.formats.scan, one chunk at a time, without the GIL. */
static PyObject *control_bytes(PyObject *self, PyObject *args) {
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*:control_bytes", &data)) return NULL;
    const unsigned char *s = data.buf;
    size_t n = (size_t)data.len;
    int found = 0;
    Py_BEGIN_ALLOW_THREADS
    int c0 = 0, lead = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        c0 |= ((c < 0x20) & !((c == 0) | (c == '\t') | (c == '\n') | (c == 0x0b) | (c == 0x0c) | (c == '\r'))) |
              (c == 0x7f);
        lead |= (c == 0xc2) | (c == 0xd8) | (c == 0xe2);
    }
    found = c0;
    /* each lead byte by memchr: text with accents or dashes is not read byte by byte */
    static const unsigned char leads[3] = {0xc2, 0xd8, 0xe2};
    for (int k = 0; !found && lead && k < 3; k++) {
        const unsigned char *at = s, *end = s + n;
        while (!found && (at = memchr(at, leads[k], (size_t)(end - at))) != NULL) {
            unsigned char d = at + 1 < end ? at[1] : 0, e = at + 2 < end ? at[2] : 0;
            if (k == 0) found = d >= 0x80 && d <= 0x9f;
            else if (k == 1) found = d == 0x9c;
            else found = (d == 0x80 && ((e >= 0x8e && e <= 0x8f) || (e >= 0xa8 && e <= 0xae))) ||
                         (d == 0x81 && e >= 0xa6 && e <= 0xa9);
            at++;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return PyBool_FromLong(found);
}

static PyObject *parse_score_py(PyObject *self, PyObject *arg) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
    if (s == NULL) return NULL;
    double value;
    if (!parse_score(s, (size_t)n, &value)) Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

/* split_topics(data, parts) -> list of bytes: the lines of data sorted into parts by a hash
 * of their topic (the first field: the bytes before the first byte at or below 0x20, as
 * read_lines finds it), each line as it is and in its order. A last line without a line
 * break gets one, so that parts can be joined. For a file whose topics are not together:
 * each part then holds whole topics (evalwh.io.runreader.topic_pieces). */
static PyObject *split_topics(PyObject *self, PyObject *args) {
    Py_buffer data;
    int parts;
    if (!PyArg_ParseTuple(args, "y*i:split_topics", &data, &parts)) return NULL;
    PyObject *result = NULL;
    size_t *sizes = NULL;
    char **into = NULL;
    if (parts < 1 || parts > 1 << 16) {
        PyErr_SetString(PyExc_ValueError, "parts must be between 1 and 65536");
        goto out;
    }
    if ((sizes = calloc((size_t)parts, sizeof(size_t))) == NULL || (into = calloc((size_t)parts, sizeof(char *))) == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    const char *text = data.buf, *end = text + data.len;
    Py_BEGIN_ALLOW_THREADS
    for (const char *s = text; s < end;) {
        const char *field = s;
        while (field < end && (unsigned char)*field > 0x20) field++;
        const char *next = memchr(s, '\n', (size_t)(end - s));
        next = next ? next + 1 : end;
        sizes[hash_bytes(s, (size_t)(field - s), 0) % (uint64_t)parts] += (size_t)(next - s) + (next[-1] != '\n');
        s = next;
    }
    Py_END_ALLOW_THREADS
    if ((result = PyList_New(parts)) == NULL) goto out;
    for (int i = 0; i < parts; i++) {
        PyObject *part = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizes[i]);
        if (part == NULL) {
            Py_CLEAR(result);
            goto out;
        }
        into[i] = PyBytes_AS_STRING(part);
        PyList_SET_ITEM(result, i, part);
    }
    Py_BEGIN_ALLOW_THREADS
    for (const char *s = text; s < end;) {
        const char *field = s;
        while (field < end && (unsigned char)*field > 0x20) field++;
        const char *next = memchr(s, '\n', (size_t)(end - s));
        next = next ? next + 1 : end;
        char **at = &into[hash_bytes(s, (size_t)(field - s), 0) % (uint64_t)parts];
        memcpy(*at, s, (size_t)(next - s));
        *at += next - s;
        if (next[-1] != '\n') *(*at)++ = '\n';
        s = next;
    }
    Py_END_ALLOW_THREADS
out:
    free(sizes);
    free(into);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"judgments", judgments, METH_VARARGS,
     "judgments(topic_offsets, topic_bytes, doc_offsets, doc_bytes, grades) -> capsule: the judgments "
     "rank_file looks lines up in, from Arrow string buffers (int32 offsets) and int32 grades."},
    {"rank_file", rank_file, METH_VARARGS,
     "rank_file(data, delimiter, tag, judgments, rel, float32, extra_fields[, max_line]) -> tuple | str."},
    {"read_run", read_run, METH_VARARGS,
     "read_run(data, delimiter, tag, judgments | None, rel, float32, extra_fields[, max_line[, documents]]) "
     "-> tuple | str."},
    {"documents", documents, METH_VARARGS,
     "documents(next_key[, spill_fd, budget[, by_document]]) -> capsule: an empty dictionary of documents "
     "(by_document) or of (topic, document) pairs; next_key: the first new key; with a spill file, at most "
     "budget bytes of its tables in memory."},
    {"documents_add", documents_add, METH_VARARGS,
     "documents_add(capsule, topic_offsets, topic_bytes, doc_offsets, doc_bytes, keys) -> None: stored pairs "
     "and their int64 keys, from Arrow string buffers, into a dictionary of pairs."},
    {"documents_add_ids", documents_add_ids, METH_VARARGS,
     "documents_add_ids(capsule, doc_offsets, doc_bytes, keys) -> None: stored documents and their int64 keys, "
     "from Arrow string buffers, into a dictionary of documents."},
    {"documents_info", documents_info, METH_O,
     "documents_info(capsule) -> (pairs, topics, topics in memory, bytes in memory, spill file bytes)."},
    {"split_topics", split_topics, METH_VARARGS,
     "split_topics(data, parts) -> list[bytes]: the lines sorted into parts by a hash of their topic."},
    {"first_long_line", first_long_line, METH_VARARGS,
     "first_long_line(data, max_line) -> int: the first line longer than max_line bytes (0: none)."},
    {"control_bytes", control_bytes, METH_VARARGS,
     "control_bytes(data) -> bool: whether data holds a control character no id may hold (C0 but "
     "whitespace and NUL, DEL, C1, direction overrides; see evalwh.io.printable.FILE_CONTROL)."},
    {"parse_score", parse_score_py, METH_O,
     "parse_score(text) -> float | None: a score as rank_file reads it (None: not its form)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_runlines",
                                    "Read one TREC run file and rank its judged lines (see evalwh.measures.direct).",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__runlines(void) {
    c_locale = new_c_locale();
    if (!c_locale) {
        PyErr_SetString(PyExc_OSError, "cannot create the C locale");
        return NULL;
    }
    return PyModule_Create(&module);
}
