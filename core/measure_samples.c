/*
 * The samples of one tp_measure call and their statistics.
 */
#include "core/measure_samples.h"

#include <stdlib.h>
#include <string.h>

bool measure_samples_add(measure_samples *samples, double ns)
{
    if (samples->count == samples->capacity) {
        size_t capacity = samples->capacity ? samples->capacity * 2 : 256;
        double *values = realloc(samples->values, capacity * sizeof *values);
        if (!values)
            return false;
        samples->values = values;
        samples->capacity = capacity;
    }
    samples->values[samples->count++] = ns;
    double delta = ns - samples->mean;
    samples->mean += delta / (double)samples->count;
    samples->m2 += delta * (ns - samples->mean);
    return true;
}

/* Newton's iteration from above, which only decreases until it stops: libtpevent links
 * no libm (a static link of it would have to add -lm), and gcc calls sqrt at -O0. */
double measure_square_root(double x)
{
    if (!(x > 0.0))
        return 0.0;
    double root = x > 1.0 ? x : 1.0;
    for (int i = 0; i < 2100; i++) {
        double next = 0.5 * (root + x / root);
        if (next >= root)
            break;
        root = next;
    }
    return root;
}

static double measure_samples_stdev(const measure_samples *samples)
{
    return samples->count < 2 ? 0.0 : measure_square_root(samples->m2 / (double)(samples->count - 1));
}

double measure_samples_noise(const measure_samples *samples)
{
    if (samples->count < 2 || samples->mean <= 0.0)
        return 0.0;
    return measure_samples_stdev(samples) / samples->mean;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool measure_samples_stats(const measure_samples *samples, measure_stats *out)
{
    memset(out, 0, sizeof *out);
    size_t n = samples->count;
    if (n == 0)
        return true;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return false;
    memcpy(sorted, samples->values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
    out->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    free(sorted);
    out->mean = samples->mean;
    out->stdev = measure_samples_stdev(samples);
    out->noise = measure_samples_noise(samples);
    return true;
}

/* Moves the k-th smallest of values[0, n) to index k (Hoare's selection, the middle
 * as pivot: a sorted or constant run costs O(n), not O(n^2)). */
static double select_kth(double *values, size_t n, size_t k)
{
    size_t left = 0, right = n - 1;
    while (left < right) {
        double pivot = values[left + (right - left) / 2];
        size_t i = left, j = right;
        while (i <= j) {
            while (values[i] < pivot)
                i++;
            while (values[j] > pivot)
                j--;
            if (i <= j) {
                double t = values[i];
                values[i] = values[j];
                values[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            right = j;
        else if (k >= i)
            left = i;
        else
            break;
    }
    return values[k];
}

bool measure_samples_median_interval(measure_samples *samples, double z, double *median, double *low, double *high)
{
    size_t n = samples->count;
    *median = *low = *high = 0.0;
    if (n == 0)
        return true;
    if (samples->scratch_capacity < n) {
        double *scratch = realloc(samples->scratch, samples->capacity * sizeof *scratch);
        if (!scratch)
            return false;
        samples->scratch = scratch;
        samples->scratch_capacity = samples->capacity;
    }
    double *v = samples->scratch;
    memcpy(v, samples->values, n * sizeof *v);
    size_t lo, hi;
    tp_median_interval_ranks(n, z * measure_square_root((double)n), &lo, &hi);
    *median = select_kth(v, n, n / 2);
    if (n % 2 == 0)
        *median = (*median + select_kth(v, n, n / 2 - 1)) / 2.0;
    *low = select_kth(v, n, lo);
    *high = select_kth(v, n, hi);
    return true;
}

void measure_samples_free(measure_samples *samples)
{
    free(samples->scratch);
    free(samples->values);
    memset(samples, 0, sizeof *samples);
}
