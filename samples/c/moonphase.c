/*
 * moonphase.c — a widgethost provider plugin in plain C, built only against
 * the SDK header (<widgethost/provider.h>). Two widget kinds:
 *
 *   org.example.moon-phase   The phase of the moon. Timeline: one entry now,
 *                            then one per hour until the next midnight (UTC);
 *                            policy AFTER(next midnight). Parameter
 *                            "hemisphere" ("north" or "south", default
 *                            "north") decides which side of the disc is lit.
 *                            Answers synchronously, on the calling thread.
 *
 *   org.example.word-clock   The time in words ("quarter past five"), one
 *                            entry every five minutes for the next hour;
 *                            policy AT_END. Its timeline answers
 *                            asynchronously, from a detached pthread, to show
 *                            that the completion may be called later and from
 *                            another thread.
 *
 * Everything is computed from ctx->now, never from the system clock, so the
 * host's virtual clock and tests get repeatable answers.
 *
 * Build:  make           (see Makefile; or, by hand:)
 *   cc -shared -fPIC -std=c99 $(pkg-config --cflags widgethost-provider) \
 *      -pthread -o moonphase.so moonphase.c -lm
 * Try:    widgethost load ./moonphase.so
 *         widgethost timeline ./moonphase.so --kind org.example.moon-phase \
 *             --config '{"hemisphere":"south"}'
 */
#define _POSIX_C_SOURCE 200809L

#include <widgethost/ext/templates.h>
#include <widgethost/provider.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* ---------------------------------------------------------------------- */

#define SECONDS_PER_HOUR 3600.0
#define SECONDS_PER_DAY 86400.0

/* Content buffers: plenty for the short JSON objects below. */
#define CONTENT_MAX 256

static const char *family_name(uint32_t family) {
    switch (family) {
    case WH_FAMILY_SYSTEM_SMALL: return "systemSmall";
    case WH_FAMILY_SYSTEM_MEDIUM: return "systemMedium";
    case WH_FAMILY_SYSTEM_LARGE: return "systemLarge";
    case WH_FAMILY_SYSTEM_EXTRA_LARGE: return "systemExtraLarge";
    case WH_FAMILY_ACCESSORY_CIRCULAR: return "accessoryCircular";
    case WH_FAMILY_ACCESSORY_RECTANGULAR: return "accessoryRectangular";
    case WH_FAMILY_ACCESSORY_INLINE: return "accessoryInline";
    default: return "unknown";
    }
}

/* Answering uses the SDK's helpers (provider.h, SDK 1.2): wh_make_entry,
 * wh_complete_entries, wh_complete_entry and wh_complete_error fill the
 * wh_entry/wh_result structs. The host copies the result during the
 * completion call, so entries and their strings may live on our stack. */

/* Finds the string member `key` in a flat JSON object and copies its value
 * (without escapes; enough for our enum-like parameter). Returns 1 if found. */
static int json_string_member(const char *json, const char *key, char *out, size_t out_size) {
    char pattern[64];
    const char *p;
    size_t n = 0;
    if (json == NULL || snprintf(pattern, sizeof pattern, "\"%s\"", key) >= (int)sizeof pattern) return 0;
    p = strstr(json, pattern);
    if (p == NULL) return 0;
    p += strlen(pattern);
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p++ != ':') return 0;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p++ != '"') return 0;
    while (*p != '\0' && *p != '"' && n + 1 < out_size) out[n++] = *p++;
    out[n] = '\0';
    return *p == '"';
}

/* ---------------------------------------------------------------------- */
/* org.example.moon-phase                                                 */
/* ---------------------------------------------------------------------- */

/* Mean synodic month and a reference new moon (2000-01-06 18:14 UTC). */
#define SYNODIC_MONTH_DAYS 29.530588853
#define REFERENCE_NEW_MOON 947182440.0

static const char *const phase_names[8] = {
    "new moon", "waxing crescent", "first quarter", "waxing gibbous",
    "full moon", "waning gibbous", "last quarter", "waning crescent",
};

/* Writes the content of one entry at `date` into `buffer`. */
static void moon_content(char *buffer, size_t size, double date, int south, uint32_t family) {
    const double pi = 3.14159265358979323846;
    double age_days = fmod((date - REFERENCE_NEW_MOON) / SECONDS_PER_DAY, SYNODIC_MONTH_DAYS);
    double fraction, illumination;
    int waxing, index;
    const char *lit_side;
    if (age_days < 0) age_days += SYNODIC_MONTH_DAYS;
    fraction = age_days / SYNODIC_MONTH_DAYS;            /* 0 new, 0.5 full */
    illumination = (1.0 - cos(2.0 * pi * fraction)) / 2.0; /* lit part of the disc */
    index = (int)floor(fraction * 8.0 + 0.5) % 8;
    waxing = fraction < 0.5;
    /* Seen from the northern hemisphere the waxing moon is lit on the right;
     * from the southern hemisphere the picture is upside down. */
    lit_side = (waxing != south) ? "right" : "left";
    snprintf(buffer, size,
             "{\"phase\":\"%s\",\"fraction\":%.4f,\"illumination\":%.3f,\"ageDays\":%.2f,"
             "\"litSide\":\"%s\",\"hemisphere\":\"%s\",\"family\":\"%s\"}",
             phase_names[index], fraction, illumination, age_days, lit_side, south ? "south" : "north",
             family_name(family));
}

/* Reads the "hemisphere" parameter; returns 0 (north), 1 (south) or -1. */
static int moon_hemisphere(const wh_context *ctx) {
    char value[16];
    if (!json_string_member(ctx->configuration_json, "hemisphere", value, sizeof value)) return 0;
    if (strcmp(value, "north") == 0) return 0;
    if (strcmp(value, "south") == 0) return 1;
    return -1;
}

static void moon_placeholder(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    /* Placeholder: generic sample data, no computation, no configuration. */
    wh_complete_entry(complete, completion_context, ctx->now,
                      "{\"phase\":\"first quarter\",\"fraction\":0.25,\"illumination\":0.5,\"ageDays\":7.38,"
                      "\"litSide\":\"right\",\"hemisphere\":\"north\",\"family\":\"placeholder\"}");
}

static void moon_snapshot(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char content[CONTENT_MAX];
    int south = moon_hemisphere(ctx);
    if (south < 0) {
        wh_complete_error(complete, completion_context, 1, "hemisphere must be \"north\" or \"south\"");
        return;
    }
    moon_content(content, sizeof content, ctx->now, south, ctx->family);
    wh_complete_entry(complete, completion_context, ctx->now, content);
}

static void moon_timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    /* At most: now + 24 hour marks. */
    char contents[25][CONTENT_MAX];
    wh_entry entries[25];
    uint32_t count = 0;
    double midnight = floor(ctx->now / SECONDS_PER_DAY) * SECONDS_PER_DAY + SECONDS_PER_DAY;
    double date;
    int south = moon_hemisphere(ctx);
    if (south < 0) {
        wh_complete_error(complete, completion_context, 1, "hemisphere must be \"north\" or \"south\"");
        return;
    }
    /* The current state, then one entry on each full hour before midnight
     * (skipping an hour mark closer than five minutes to now). */
    moon_content(contents[count], CONTENT_MAX, ctx->now, south, ctx->family);
    entries[count] = wh_make_entry(ctx->now, contents[count]);
    count++;
    for (date = floor(ctx->now / SECONDS_PER_HOUR) * SECONDS_PER_HOUR + SECONDS_PER_HOUR;
         date < midnight && count < 25; date += SECONDS_PER_HOUR) {
        if (date - ctx->now < WH_MIN_ENTRY_SPACING) continue;
        moon_content(contents[count], CONTENT_MAX, date, south, ctx->family);
        entries[count] = wh_make_entry(date, contents[count]);
        count++;
    }
    wh_complete_entries(complete, completion_context, entries, count, WH_POLICY_AFTER, midnight);
}

static const wh_parameter moon_parameters[] = {
    WH_PARAMETER(WH_PARAM_STRING, "hemisphere", "\"north\"",
                 "Where you watch from: \"north\" or \"south\" (decides which side is lit)"),
};

/* ---------------------------------------------------------------------- */
/* org.example.word-clock                                                 */
/* ---------------------------------------------------------------------- */

static const char *const hour_words[12] = {
    "twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
};

/* "five past ten", "half past ten", "twenty to eleven", "ten o'clock",
 * rounded down to five minutes, in UTC. */
static void words_for(char *buffer, size_t size, double date) {
    static const char *const minute_words[12] = {
        "", "five past ", "ten past ", "quarter past ", "twenty past ", "twenty-five past ", "half past ",
        "twenty-five to ", "twenty to ", "quarter to ", "ten to ", "five to ",
    };
    double seconds_of_day = fmod(date, SECONDS_PER_DAY);
    int minutes, hour, slot;
    if (seconds_of_day < 0) seconds_of_day += SECONDS_PER_DAY;
    minutes = (int)(seconds_of_day / 60.0);
    hour = minutes / 60;
    slot = (minutes % 60) / 5;
    if (slot > 6) hour += 1; /* "... to <next hour>" */
    snprintf(buffer, size, "%s%s%s", minute_words[slot], hour_words[hour % 12], slot == 0 ? " o'clock" : "");
}

static void clock_content(char *buffer, size_t size, double date, uint32_t family) {
    char words[64];
    words_for(words, sizeof words, date);
    if (family == WH_FAMILY_ACCESSORY_INLINE) {
        snprintf(buffer, size, "{\"text\":\"%s\",\"zone\":\"UTC\"}", words);
    } else {
        snprintf(buffer, size, "{\"text\":\"It is %s\",\"zone\":\"UTC\",\"family\":\"%s\"}", words,
                 family_name(family));
    }
}

static void clock_placeholder(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_complete_entry(complete, completion_context, ctx->now,
                      "{\"text\":\"It is ten past ten\",\"zone\":\"UTC\",\"family\":\"placeholder\"}");
}

static void clock_snapshot(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char content[CONTENT_MAX];
    clock_content(content, sizeof content, ctx->now, ctx->family);
    wh_complete_entry(complete, completion_context, ctx->now, content);
}

/* The work a timeline call hands to its thread. `ctx` stays valid until we
 * call `complete` (see wh_context in provider.h). */
typedef struct clock_job {
    const wh_context *ctx;
    wh_complete_fn complete;
    void *completion_context;
} clock_job;

static void clock_timeline_now(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    /* Entry 0 now, then on every five-minute mark for about an hour (a mark
     * closer than five minutes to now is skipped: the host warns about
     * entries packed closer than that). */
    char contents[13][CONTENT_MAX];
    wh_entry entries[13];
    uint32_t count = 0;
    double date = floor(ctx->now / WH_MIN_ENTRY_SPACING) * WH_MIN_ENTRY_SPACING + WH_MIN_ENTRY_SPACING;
    clock_content(contents[count], CONTENT_MAX, ctx->now, ctx->family);
    entries[count] = wh_make_entry(ctx->now, contents[count]);
    count++;
    for (; count < 13; date += WH_MIN_ENTRY_SPACING) {
        if (date - ctx->now < WH_MIN_ENTRY_SPACING) continue;
        clock_content(contents[count], CONTENT_MAX, date, ctx->family);
        entries[count] = wh_make_entry(date, contents[count]);
        count++;
    }
    wh_complete_entries(complete, completion_context, entries, count, WH_POLICY_AT_END, 0.0);
}

static void *clock_thread(void *arg) {
    clock_job job = *(clock_job *)arg;
    free(arg);
    clock_timeline_now(job.ctx, job.complete, job.completion_context);
    return NULL;
}

static void clock_timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pthread_t thread;
    pthread_attr_t attr;
    clock_job *job = malloc(sizeof *job);
    int started = 0;
    if (job != NULL) {
        job->ctx = ctx;
        job->complete = complete;
        job->completion_context = completion_context;
        if (pthread_attr_init(&attr) == 0) {
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            started = pthread_create(&thread, &attr, clock_thread, job) == 0;
            pthread_attr_destroy(&attr);
        }
        if (!started) free(job);
    }
    /* Return at once; the thread calls `complete`. If no thread could be
     * started, answer on this thread instead: still exactly once. */
    if (!started) clock_timeline_now(ctx, complete, completion_context);
}

/* ---------------------------------------------------------------------- */
/* The descriptor                                                         */
/* ---------------------------------------------------------------------- */

static const wh_kind kinds[] = {
    WH_KIND_WITH_PARAMETERS("org.example.moon-phase", "Moon Phase", "Tonight's moon, hour by hour.",
                            WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM | WH_FAMILY_ACCESSORY_CIRCULAR |
                                WH_FAMILY_ACCESSORY_INLINE,
                            moon_parameters, moon_placeholder, moon_snapshot, moon_timeline),
    WH_KIND("org.example.word-clock", "Word Clock", "The time in words, every five minutes.",
            WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM | WH_FAMILY_SYSTEM_LARGE |
                WH_FAMILY_ACCESSORY_RECTANGULAR | WH_FAMILY_ACCESSORY_INLINE,
            clock_placeholder, clock_snapshot, clock_timeline),
};

/* The descriptor (ABI 1, the SDK version, the kinds), a refusal for a host
 * that does not offer ABI 1, and the exported widgethost_provider_entry.
 * warm_up: none. It is for plugins with lazily built state (a language
 * runtime, parsed tables) that every forked call would build again; this
 * plugin computes everything from ctx->now. */
WH_DEFINE_PROVIDER("org.example.moonphase", "Moon Phase & Word Clock", "1.0.0", "Example Org", kinds, NULL)

/* ---------------------------------------------------------------------- */
/* Templates (the templates extension, <widgethost/ext/templates.h>)      */
/* ---------------------------------------------------------------------- */

/* How the kinds look in `widgethost preview` and the dashboard: Mustache
 * over each entry's JSON members ({{phase}}, {{illumination}}, ...). Values
 * are HTML-escaped; a template is markup and CSS only (no script runs).
 * A template with family bits wins over the kind's template for every
 * family (0). The strings are static: the host copies them at load. */
static const wh_template templates[] = {
    WH_TEMPLATE("org.example.moon-phase", 0,
                "<style>.moon{height:100%;box-sizing:border-box;padding:14px;background:#0b1026;color:#f5f3ce}"
                ".disc{width:64px;height:64px;border-radius:50%;margin:6px 0 10px;"
                "background:radial-gradient(circle at 35% 35%,#fffbe0,#b8b28a)}"
                ".moon b{display:block;font-size:15px;text-transform:capitalize}.moon span{font-size:11px;opacity:.75}"
                "</style><div class=\"moon\"><div class=\"disc\"></div><b>{{phase}}</b>"
                "<span>{{ageDays}} days old &middot; {{hemisphere}}ern sky</span></div>"),
    WH_TEMPLATE("org.example.moon-phase", WH_FAMILY_ACCESSORY_CIRCULAR,
                "<style>.c{width:76px;height:76px;border-radius:50%;box-sizing:border-box;border:4px solid #1c1c1e;"
                "display:flex;align-items:center;justify-content:center;text-align:center;font-size:10px;"
                "font-weight:700;text-transform:capitalize}</style><div class=\"c\">{{phase}}</div>"),
    WH_TEMPLATE("org.example.moon-phase", WH_FAMILY_ACCESSORY_INLINE,
                "<div style=\"padding:4px 6px;white-space:nowrap\">Moon: {{phase}}</div>"),
    WH_TEMPLATE("org.example.word-clock", 0,
                "<style>.w{height:100%;box-sizing:border-box;padding:14px;background:#fafafa;font-size:20px;"
                "font-weight:700;line-height:1.15}.w small{display:block;margin-top:8px;font-size:11px;"
                "font-weight:400;color:#8e8e93}</style><div class=\"w\">{{text}}<small>{{zone}}</small></div>"),
    WH_TEMPLATE("org.example.word-clock", WH_FAMILY_ACCESSORY_RECTANGULAR | WH_FAMILY_ACCESSORY_INLINE,
                "<div style=\"padding:4px 8px;font-weight:600\">{{text}}</div>"),
};

/* The exported widgethost_provider_templates, returning the array above. */
WH_DEFINE_TEMPLATES(templates)
