#include <stdlib.h>
#include <string.h>

#define GROW(n) ((n) * 2)

struct buffer {
    char *data;
    size_t len;
    size_t cap;
};

static int reserve(struct buffer *buf, size_t extra);

int buffer_append(struct buffer *buf, const char *src, size_t len) {
    if (reserve(buf, len) != 0) {
        return -1;
    }
    memcpy(buf->data + buf->len, src, len);
    buf->len += len;
    return 0;
}

static int reserve(struct buffer *buf, size_t extra) {
    size_t cap = buf->cap ? buf->cap : 16;
    while (cap < buf->len + extra) {
        cap = GROW(cap);
    }
    char *data = realloc(buf->data, cap);
    if (!data) {
        return -1;
    }
    buf->data = data;
    buf->cap = cap;
    return 0;
}

size_t count_lines(const char *text, size_t *out) {
    size_t lines = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            lines++;
        }
    }
    *out = lines;
    fill(&lines, out);
    return (lines);
}

void noop(void) {}
