/*
 * The C floor of a sysfs scan: replays a FloorPlan written by the end-to-end harness (one operation a line:
 * "R path" read the file, "L path" read the link, "D path" list the directory, "S path" stat for a directory,
 * "E path" stat for existence) with plain system calls and one reusable buffer.
 *
 *   floor PLAN ROUNDS   prints "first_ns min_ns median_ns cpu_ns_per_round" on one line
 *
 * first_ns is the first round (what a one-shot process pays), min/median over all rounds, cpu_ns_per_round the
 * process's user+system time divided by the rounds.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct op { char kind; char *path; };

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *) a, y = *(const long long *) b;
    return x < y ? -1 : x > y;
}

static long run(struct op *ops, size_t n) {
    static char buf[65536];
    long sum = 0;
    struct stat st;
    for (size_t i = 0; i < n; i++) {
        const char *p = ops[i].path;
        switch (ops[i].kind) {
        case 'R': {
            int fd = open(p, O_RDONLY | O_CLOEXEC);
            if (fd < 0) { sum--; break; }
            ssize_t r;
            while ((r = read(fd, buf, sizeof buf)) > 0) sum += r;
            close(fd);
            break;
        }
        case 'L': {
            ssize_t r = readlink(p, buf, sizeof buf);
            sum += r < 0 ? -1 : r;
            break;
        }
        case 'D': {
            DIR *d = opendir(p);
            if (!d) { sum--; break; }
            while (readdir(d)) sum++;
            closedir(d);
            break;
        }
        case 'S': sum += stat(p, &st) == 0 && S_ISDIR(st.st_mode); break;
        case 'E': sum += stat(p, &st) == 0; break;
        default: fprintf(stderr, "bad op %c\n", ops[i].kind); exit(2);
        }
    }
    return sum;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: floor PLAN ROUNDS\n"); return 2; }
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 2; }
    int rounds = atoi(argv[2]);
    if (rounds < 1) { fprintf(stderr, "ROUNDS must be positive\n"); return 2; }
    size_t cap = 1024, n = 0;
    struct op *ops = malloc(cap * sizeof *ops);
    char *line = NULL;
    size_t len = 0;
    ssize_t got;
    while ((got = getline(&line, &len, f)) > 0) {
        if (got < 3) continue;
        if (line[got - 1] == '\n') line[got - 1] = 0;
        if (n == cap) ops = realloc(ops, (cap *= 2) * sizeof *ops);
        ops[n].kind = line[0];
        ops[n].path = strdup(line + 2);
        n++;
    }
    fclose(f);
    long long *t = malloc(rounds * sizeof *t);
    long sink = 0;
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    for (int i = 0; i < rounds; i++) {
        long long s = now_ns();
        sink += run(ops, n);
        t[i] = now_ns() - s;
    }
    getrusage(RUSAGE_SELF, &after);
    long long cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec
            - before.ru_stime.tv_sec) * 1000000000LL + (after.ru_utime.tv_usec - before.ru_utime.tv_usec
            + after.ru_stime.tv_usec - before.ru_stime.tv_usec) * 1000LL;
    long long first = t[0];
    qsort(t, rounds, sizeof *t, cmp);
    printf("%lld %lld %lld %lld %ld\n", first, t[0], t[rounds / 2], cpu / rounds, sink % 2);
    return 0;
}
