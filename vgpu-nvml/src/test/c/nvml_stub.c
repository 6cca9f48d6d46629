/*
 * A stub libnvidia-ml.so.1 for the vgpu-nvml tests. It exports the NVML entry points the binding uses, with
 * the argument and struct layouts of nvml.h (see docs/HOST-FACTS.md §6), and serves canned data:
 *
 *   index  NVML bus id         what it models
 *   0      00000000:41:00.0    vGPU card, types 1414, 1428; XID events supported
 *   1      00000000:C1:00.0    vGPU card whose ids 1414 and 1428 overlap card 0 but name other profiles;
 *                              XID events supported
 *   2      00000001:03:00.0    vGPU card with 40 types (more than the binding's first buffer: the
 *                              INSUFFICIENT_SIZE retry); registering events answers NOT_SUPPORTED
 *   3      00000000:81:00.0    no vGPU (supported vGPUs: NOT_SUPPORTED); no XID event type supported
 *
 * Card-local type ids: the real nvmlVgpuTypeGetName takes no device. docs/HOST-FACTS.md §1c says ids are
 * unique only within one card, so this stub resolves a name against the card whose supported list the
 * calling thread read last. A binding that cached names by id across cards would then hand card 1 the
 * names of card 0, and the tests would see it.
 *
 * Events: stub_reset() queues one ignored XID (43 on card 0) followed by one critical XID (79 on card 1), unless the
 * environment names an events file (VGPU_NVML_STUB_EVENTS, below), from which another process injects events.
 * stub_queue_instance_event queues one attributed to a GPU instance. An event is delivered by nvmlEventSetWait_v2
 * only to a set in which its device registered that type.
 *
 * Failure modes: stub_set_init_result(rc) makes nvmlInit_v2 fail until it is set back to 0 (a driver that is
 * still loading), stub_fail_bus_id_lookups(device, rc, n) makes the next n handle lookups by bus id fail (a
 * transient NVML_ERROR_GPU_IS_LOST), stub_set_wait_result(rc) makes every event wait fail.
 *
 * Everything named stub_* is a test-only control symbol. Handles passed in are validated against the
 * stub's own tables; an unknown handle is counted (stub_invalid_handles) and answered INVALID_ARGUMENT,
 * and any call other than init/error string while NVML is not initialized is counted
 * (stub_calls_uninitialized). All state is global and guarded by one mutex, counters are atomic.
 *
 * Built twice by the pom: normally, and with -DSTUB_OLD_DRIVER, which leaves out the _v2 symbol
 * nvmlDeviceGetHandleByPciBusId_v2 (old drivers export only the unversioned name).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct stub_device *nvmlDevice_t;
typedef struct stub_event_set *nvmlEventSet_t;
typedef unsigned int nvmlVgpuTypeId_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999,
};

#define NVML_EVENT_TYPE_SINGLE_BIT_ECC 0x1ULL
#define NVML_EVENT_TYPE_DOUBLE_BIT_ECC 0x2ULL
#define NVML_EVENT_TYPE_XID_CRITICAL 0x8ULL

/* nvml.h layouts */
typedef struct {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t is 68 bytes");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t is 32 bytes on LP64");

/* ---- canned devices ------------------------------------------------------------------------------- */

#define DEVICE_COUNT 4
#define MANY_TYPES 40
#define NO_DEVICE DEVICE_COUNT

struct stub_device {
    unsigned int domain, bus, slot;
    unsigned int pci_device_id;
    nvmlReturn_t vgpu_rc;
    unsigned int type_count;
    const unsigned int *type_ids;
    const char *const *type_names;
    unsigned long long supported_events;
    nvmlReturn_t register_rc;
};

static const unsigned int CARD0_IDS[] = {1414, 1428};
static const char *const CARD0_NAMES[] = {"NVIDIA H200X-1-18C", "NVIDIA H200X-141C"};
static const unsigned int CARD1_IDS[] = {1145, 1414, 1428};
static const char *const CARD1_NAMES[] = {"NVIDIA L40S-1B", "NVIDIA L40S-24Q", "NVIDIA L40S-48Q"};
static unsigned int card2_ids[MANY_TYPES];
static char card2_name_text[MANY_TYPES][64];
static const char *card2_names[MANY_TYPES];

static struct stub_device devices[DEVICE_COUNT] = {
    {0x0000, 0x41, 0x00, 0x233510DE, NVML_SUCCESS, 2, CARD0_IDS, CARD0_NAMES,
     NVML_EVENT_TYPE_XID_CRITICAL | NVML_EVENT_TYPE_DOUBLE_BIT_ECC | NVML_EVENT_TYPE_SINGLE_BIT_ECC, NVML_SUCCESS},
    {0x0000, 0xC1, 0x00, 0x26B910DE, NVML_SUCCESS, 3, CARD1_IDS, CARD1_NAMES,
     NVML_EVENT_TYPE_XID_CRITICAL, NVML_SUCCESS},
    {0x0001, 0x03, 0x00, 0x2BB510DE, NVML_SUCCESS, MANY_TYPES, card2_ids, card2_names,
     NVML_EVENT_TYPE_XID_CRITICAL, NVML_ERROR_NOT_SUPPORTED},
    {0x0000, 0x81, 0x00, 0x20B510DE, NVML_ERROR_NOT_SUPPORTED, 0, NULL, NULL, 0, NVML_SUCCESS},
};

static void fill_card2(void) {
    for (unsigned int i = 0; i < MANY_TYPES; i++) {
        card2_ids[i] = 3000 + i;
        snprintf(card2_name_text[i], sizeof card2_name_text[i], "NVIDIA RTX Pro 6000 Blackwell DC-%u-%uQ",
                 1 + i % 4, 2 * (i + 1));
        card2_names[i] = card2_name_text[i];
    }
    /* the longest name NVML_VGPU_NAME_BUFFER_SIZE (64) can hold: 63 characters and the NUL */
    snprintf(card2_name_text[MANY_TYPES - 1], sizeof card2_name_text[0], "%s",
             "NVIDIA RTX Pro 6000 Blackwell Server Edition DC-4-96Q-LONGNAME1");
}

/* ---- counters -------------------------------------------------------------------------------------- */

enum fn {
    F_INIT, F_SHUTDOWN, F_COUNT, F_BY_INDEX, F_BY_BUS_ID, F_PCI_INFO, F_SUPPORTED_VGPUS, F_TYPE_NAME,
    F_SET_CREATE, F_SUPPORTED_EVENTS, F_REGISTER, F_WAIT, F_SET_FREE, F_COUNT_OF_FUNCTIONS
};
static const char *const FN_NAMES[F_COUNT_OF_FUNCTIONS] = {
    "nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetSupportedVgpus",
    "nvmlVgpuTypeGetName", "nvmlEventSetCreate", "nvmlDeviceGetSupportedEventTypes",
    "nvmlDeviceRegisterEvents", "nvmlEventSetWait_v2", "nvmlEventSetFree",
};

static long calls[F_COUNT_OF_FUNCTIONS][DEVICE_COUNT + 1];
static long calls_uninitialized;
static long invalid_handles;
static int init_refcount;
static nvmlReturn_t init_rc;
static nvmlReturn_t forced_wait_rc;
/* stub_fail_bus_id_lookups: the next bus_id_failures lookups of bus_id_failure_device (-1: any) answer this */
static nvmlReturn_t bus_id_failure_rc;
static int bus_id_failure_device;
static int bus_id_failures;
static unsigned int last_wait_timeout;
static long events_taken;

static void count(enum fn f, int device) {
    __atomic_add_fetch(&calls[f][device], 1, __ATOMIC_SEQ_CST);
}

static int initialized(void) {
    if (__atomic_load_n(&init_refcount, __ATOMIC_SEQ_CST) > 0) {
        return 1;
    }
    __atomic_add_fetch(&calls_uninitialized, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int device_index(nvmlDevice_t device) {
    for (int i = 0; i < DEVICE_COUNT; i++) {
        if (device == &devices[i]) {
            return i;
        }
    }
    __atomic_add_fetch(&invalid_handles, 1, __ATOMIC_SEQ_CST);
    return -1;
}

/* ---- event sets and the event queue (guarded by lock) --------------------------------------------- */

#define MAX_SETS 64
#define MAX_EVENTS 64

struct stub_event_set {
    unsigned long long registered[DEVICE_COUNT];
};

struct queued_event {
    int device; /* -1: no device attributable */
    unsigned long long type;
    unsigned long long data;
    unsigned int gpu_instance; /* 0xFFFFFFFF: none */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static struct stub_event_set *live_sets[MAX_SETS];
static struct queued_event queue[MAX_EVENTS];
static int queue_head, queue_length;

/*
 * Events a test process outside this one injects (the daemon's end-to-end tests): when the environment names a file
 * in VGPU_NVML_STUB_EVENTS, no canned events are queued, and every wait reads the lines appended to the file since
 * it last looked: "<bus id> <xid> [<gpu instance>]" queues an XID critical error of the device with that bus id
 * (any form parse_bus_id accepts; "none" or an unknown id: an event attributed to no device). Only complete lines
 * (ending in a newline) are read.
 */
#define EVENTS_FILE_ENV "VGPU_NVML_STUB_EVENTS"
#define NO_INSTANCE 0xFFFFFFFFu
static long events_file_offset;

static int parse_bus_id(const char *text, unsigned int *domain, unsigned int *bus, unsigned int *slot);

static int device_by_bus_id(const char *text) {
    unsigned int domain, bus, slot;
    if (!parse_bus_id(text, &domain, &bus, &slot)) {
        return -1;
    }
    for (int i = 0; i < DEVICE_COUNT; i++) {
        if (devices[i].domain == domain && devices[i].bus == bus && devices[i].slot == slot) {
            return i;
        }
    }
    return -1;
}

static void enqueue_locked(int device, unsigned long long type, unsigned long long data, unsigned int gpu_instance);

static void read_events_file_locked(void) {
    const char *name = getenv(EVENTS_FILE_ENV);
    if (name == NULL || name[0] == '\0') {
        return;
    }
    FILE *file = fopen(name, "r");
    if (file == NULL) {
        return;
    }
    if (fseek(file, events_file_offset, SEEK_SET) == 0) {
        char line[256];
        while (fgets(line, sizeof line, file) != NULL) {
            size_t length = strlen(line);
            if (length == 0 || line[length - 1] != '\n') {
                break; /* not complete yet: read again next time */
            }
            events_file_offset += (long)length;
            char bus_id[64];
            unsigned long long xid;
            unsigned int instance = NO_INSTANCE;
            int fields = sscanf(line, "%63s %llu %u", bus_id, &xid, &instance);
            if (fields >= 2) {
                enqueue_locked(device_by_bus_id(bus_id), NVML_EVENT_TYPE_XID_CRITICAL, xid,
                               fields == 3 ? instance : NO_INSTANCE);
            }
        }
    }
    fclose(file);
}

static int set_is_live_locked(nvmlEventSet_t set) {
    for (int i = 0; i < MAX_SETS; i++) {
        if (set != NULL && live_sets[i] == set) {
            return 1;
        }
    }
    __atomic_add_fetch(&invalid_handles, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static void enqueue_locked(int device, unsigned long long type, unsigned long long data, unsigned int gpu_instance) {
    if (queue_length < MAX_EVENTS) {
        queue[(queue_head + queue_length) % MAX_EVENTS] = (struct queued_event){device, type, data, gpu_instance};
        queue_length++;
        pthread_cond_broadcast(&arrived);
    }
}

/* ---- NVML entry points ---------------------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlInit_v2(void) {
    count(F_INIT, NO_DEVICE);
    nvmlReturn_t rc = __atomic_load_n(&init_rc, __ATOMIC_SEQ_CST);
    if (rc != NVML_SUCCESS) {
        return rc;
    }
    __atomic_add_fetch(&init_refcount, 1, __ATOMIC_SEQ_CST);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
    count(F_SHUTDOWN, NO_DEVICE);
    int current = __atomic_load_n(&init_refcount, __ATOMIC_SEQ_CST);
    while (current > 0 && !__atomic_compare_exchange_n(&init_refcount, &current, current - 1, 0,
                                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return current > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) {
    count(F_COUNT, NO_DEVICE);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (deviceCount == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *deviceCount = DEVICE_COUNT;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    count(F_BY_INDEX, index < DEVICE_COUNT ? (int)index : NO_DEVICE);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (device == NULL || index >= DEVICE_COUNT) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *device = &devices[index];
    return NVML_SUCCESS;
}

/* Accepts domain:bus:device.function, domain:bus:device and bus:device.function, hex, any case. */
static int parse_bus_id(const char *text, unsigned int *domain, unsigned int *bus, unsigned int *slot) {
    unsigned int function = 0;
    int used = -1;
    size_t length = strlen(text);
    if (sscanf(text, "%x:%x:%x.%x%n", domain, bus, slot, &function, &used) == 4 && (size_t)used == length) {
        return function == 0;
    }
    used = -1;
    if (sscanf(text, "%x:%x:%x%n", domain, bus, slot, &used) == 3 && (size_t)used == length) {
        return 1;
    }
    used = -1;
    *domain = 0;
    if (sscanf(text, "%x:%x.%x%n", bus, slot, &function, &used) == 3 && (size_t)used == length) {
        return function == 0;
    }
    return 0;
}

/* One of the failures set by stub_fail_bus_id_lookups for device i, used up; NVML_SUCCESS when none is left. */
static nvmlReturn_t take_bus_id_failure(int i) {
    nvmlReturn_t rc = NVML_SUCCESS;
    pthread_mutex_lock(&lock);
    if (bus_id_failures > 0 && (bus_id_failure_device < 0 || bus_id_failure_device == i)) {
        bus_id_failures--;
        rc = bus_id_failure_rc;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static nvmlReturn_t handle_by_bus_id(const char *pciBusId, nvmlDevice_t *device) {
    unsigned int domain, bus, slot;
    if (pciBusId == NULL || device == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (!parse_bus_id(pciBusId, &domain, &bus, &slot)) {
        count(F_BY_BUS_ID, NO_DEVICE);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < DEVICE_COUNT; i++) {
        if (devices[i].domain == domain && devices[i].bus == bus && devices[i].slot == slot) {
            count(F_BY_BUS_ID, i);
            if (!initialized()) {
                return NVML_ERROR_UNINITIALIZED;
            }
            nvmlReturn_t forced = take_bus_id_failure(i);
            if (forced != NVML_SUCCESS) {
                return forced;
            }
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    count(F_BY_BUS_ID, NO_DEVICE);
    return initialized() ? NVML_ERROR_NOT_FOUND : NVML_ERROR_UNINITIALIZED;
}

#ifndef STUB_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device) {
    return handle_by_bus_id(pciBusId, device);
}
#else
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device) {
    return handle_by_bus_id(pciBusId, device);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    int i = device_index(device);
    count(F_PCI_INFO, i < 0 ? NO_DEVICE : i);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (i < 0 || pci == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const struct stub_device *d = &devices[i];
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", d->domain, d->bus, d->slot);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", d->domain, d->bus, d->slot);
    pci->domain = d->domain;
    pci->bus = d->bus;
    pci->device = d->slot;
    pci->pciDeviceId = d->pci_device_id;
    pci->pciSubSystemId = 0x187610DE;
    return NVML_SUCCESS;
}

/* The card whose type ids this thread listed last: names resolve against it (card-local ids). */
static __thread const struct stub_device *names_context;

EXPORT nvmlReturn_t nvmlDeviceGetSupportedVgpus(nvmlDevice_t device, unsigned int *vgpuCount,
                                                nvmlVgpuTypeId_t *vgpuTypeIds) {
    int i = device_index(device);
    count(F_SUPPORTED_VGPUS, i < 0 ? NO_DEVICE : i);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (i < 0 || vgpuCount == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const struct stub_device *d = &devices[i];
    if (d->vgpu_rc != NVML_SUCCESS) {
        return d->vgpu_rc;
    }
    if (*vgpuCount < d->type_count) {
        *vgpuCount = d->type_count;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (vgpuTypeIds == NULL && d->type_count > 0) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    for (unsigned int k = 0; k < d->type_count; k++) {
        vgpuTypeIds[k] = d->type_ids[k];
    }
    *vgpuCount = d->type_count;
    names_context = d;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlVgpuTypeGetName(nvmlVgpuTypeId_t vgpuTypeId, char *vgpuTypeName, unsigned int *size) {
    const struct stub_device *d = names_context;
    count(F_TYPE_NAME, d == NULL ? NO_DEVICE : (int)(d - devices));
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (size == NULL || d == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    for (unsigned int k = 0; k < d->type_count; k++) {
        if (d->type_ids[k] == vgpuTypeId) {
            size_t needed = strlen(d->type_names[k]) + 1;
            if (vgpuTypeName == NULL || *size < needed) {
                *size = (unsigned int)needed;
                return NVML_ERROR_INSUFFICIENT_SIZE;
            }
            memcpy(vgpuTypeName, d->type_names[k], needed);
            *size = (unsigned int)needed;
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    count(F_SET_CREATE, NO_DEVICE);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (set == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_SETS; i++) {
        if (live_sets[i] == NULL) {
            live_sets[i] = calloc(1, sizeof(struct stub_event_set));
            *set = live_sets[i];
            pthread_mutex_unlock(&lock);
            return live_sets[i] != NULL ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
        }
    }
    pthread_mutex_unlock(&lock);
    return NVML_ERROR_UNKNOWN;
}

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes) {
    int i = device_index(device);
    count(F_SUPPORTED_EVENTS, i < 0 ? NO_DEVICE : i);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (i < 0 || eventTypes == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *eventTypes = devices[i].supported_events;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                             nvmlEventSet_t set) {
    int i = device_index(device);
    count(F_REGISTER, i < 0 ? NO_DEVICE : i);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    pthread_mutex_lock(&lock);
    nvmlReturn_t rc = NVML_SUCCESS;
    if (i < 0 || !set_is_live_locked(set)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (devices[i].register_rc != NVML_SUCCESS) {
        rc = devices[i].register_rc;
    } else if ((eventTypes & ~devices[i].supported_events) != 0) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    } else {
        set->registered[i] |= eventTypes;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int deliverable_locked(nvmlEventSet_t set, const struct queued_event *e) {
    if (e->device < 0) {
        for (int i = 0; i < DEVICE_COUNT; i++) {
            if (set->registered[i] & e->type) {
                return 1;
            }
        }
        return 0;
    }
    return (set->registered[e->device] & e->type) != 0;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    count(F_WAIT, NO_DEVICE);
    __atomic_store_n(&last_wait_timeout, timeoutms, __ATOMIC_SEQ_CST);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    pthread_mutex_lock(&lock);
    if (data == NULL || !set_is_live_locked(set)) {
        pthread_mutex_unlock(&lock);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (forced_wait_rc != NVML_SUCCESS) {
        nvmlReturn_t rc = forced_wait_rc;
        pthread_mutex_unlock(&lock);
        return rc;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeoutms / 1000;
    deadline.tv_nsec += (long)(timeoutms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    for (;;) {
        read_events_file_locked();
        while (queue_length > 0) {
            struct queued_event e = queue[queue_head];
            queue_head = (queue_head + 1) % MAX_EVENTS;
            queue_length--;
            events_taken++;
            if (deliverable_locked(set, &e)) {
                data->device = e.device < 0 ? NULL : &devices[e.device];
                data->eventType = e.type;
                data->eventData = e.data;
                data->gpuInstanceId = e.gpu_instance;
                data->computeInstanceId = 0xFFFFFFFFu;
                pthread_mutex_unlock(&lock);
                return NVML_SUCCESS;
            }
        }
        /* With an events file, look at it every 20 ms until the deadline. */
        struct timespec until = deadline;
        const char *events_file = getenv(EVENTS_FILE_ENV);
        if (events_file != NULL && events_file[0] != '\0') {
            struct timespec soon;
            clock_gettime(CLOCK_REALTIME, &soon);
            soon.tv_nsec += 20000000L;
            if (soon.tv_nsec >= 1000000000L) {
                soon.tv_sec++;
                soon.tv_nsec -= 1000000000L;
            }
            if (soon.tv_sec < until.tv_sec || (soon.tv_sec == until.tv_sec && soon.tv_nsec < until.tv_nsec)) {
                until = soon;
            }
        }
        int waited = pthread_cond_timedwait(&arrived, &lock, &until);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int past = now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
        if (waited == ETIMEDOUT && past && queue_length == 0) {
            read_events_file_locked();
            if (queue_length == 0) {
                pthread_mutex_unlock(&lock);
                return NVML_ERROR_TIMEOUT;
            }
        }
    }
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    count(F_SET_FREE, NO_DEVICE);
    if (!initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_SETS; i++) {
        if (set != NULL && live_sets[i] == set) {
            live_sets[i] = NULL;
            free(set);
            pthread_mutex_unlock(&lock);
            return NVML_SUCCESS;
        }
    }
    __atomic_add_fetch(&invalid_handles, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock);
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* ---- test-only control symbols -------------------------------------------------------------------- */

/* Clears counters, results and events, frees leftover sets, and queues the canned events. */
__attribute__((constructor)) EXPORT void stub_reset(void) {
    pthread_mutex_lock(&lock);
    fill_card2();
    memset(calls, 0, sizeof calls);
    calls_uninitialized = 0;
    invalid_handles = 0;
    init_refcount = 0;
    init_rc = NVML_SUCCESS;
    forced_wait_rc = NVML_SUCCESS;
    bus_id_failure_rc = NVML_SUCCESS;
    bus_id_failure_device = -1;
    bus_id_failures = 0;
    last_wait_timeout = 0;
    events_taken = 0;
    for (int i = 0; i < MAX_SETS; i++) {
        free(live_sets[i]);
        live_sets[i] = NULL;
    }
    queue_head = 0;
    queue_length = 0;
    events_file_offset = 0;
    if (getenv(EVENTS_FILE_ENV) == NULL || getenv(EVENTS_FILE_ENV)[0] == '\0') {
        enqueue_locked(0, NVML_EVENT_TYPE_XID_CRITICAL, 43, NO_INSTANCE);
        enqueue_locked(1, NVML_EVENT_TYPE_XID_CRITICAL, 79, NO_INSTANCE);
    }
    pthread_mutex_unlock(&lock);
}

/* Drops the canned events (tests that queue their own). */
EXPORT void stub_clear_events(void) {
    pthread_mutex_lock(&lock);
    queue_head = 0;
    queue_length = 0;
    pthread_mutex_unlock(&lock);
}

/* Queues one event; device -1 = an event NVML cannot attribute to a device (NULL handle). */
EXPORT void stub_queue_event(int device, unsigned long long type, unsigned long long data) {
    pthread_mutex_lock(&lock);
    enqueue_locked(device >= 0 && device < DEVICE_COUNT ? device : -1, type, data, NO_INSTANCE);
    pthread_mutex_unlock(&lock);
}

/* Queues one event attributed to a GPU instance (gpuInstanceId), e.g. an XID inside one MIG instance. */
EXPORT void stub_queue_instance_event(int device, unsigned long long type, unsigned long long data,
                                      unsigned int gpu_instance) {
    pthread_mutex_lock(&lock);
    enqueue_locked(device >= 0 && device < DEVICE_COUNT ? device : -1, type, data, gpu_instance);
    pthread_mutex_unlock(&lock);
}

/* Non-zero: every nvmlInit_v2 answers this (and initializes nothing) until it is set back to 0. */
EXPORT void stub_set_init_result(int rc) {
    __atomic_store_n(&init_rc, rc, __ATOMIC_SEQ_CST);
}

/*
 * The next `times` handle lookups by PCI bus id of device index `device` (-1: of any known device) answer `rc`
 * instead of the handle, e.g. NVML_ERROR_GPU_IS_LOST once; later lookups succeed again. Lookups of unknown
 * bus ids and uninitialized calls do not use them up.
 */
EXPORT void stub_fail_bus_id_lookups(int device, int rc, int times) {
    pthread_mutex_lock(&lock);
    bus_id_failure_device = device >= 0 && device < DEVICE_COUNT ? device : -1;
    bus_id_failure_rc = rc;
    bus_id_failures = times > 0 ? times : 0;
    pthread_mutex_unlock(&lock);
}

/* Non-zero: every nvmlEventSetWait_v2 answers this at once. */
EXPORT void stub_set_wait_result(int rc) {
    pthread_mutex_lock(&lock);
    forced_wait_rc = rc;
    pthread_mutex_unlock(&lock);
}

/* Calls of one entry point (name as in FN_NAMES) for one device index, or for all with -1. */
EXPORT long stub_calls(const char *function, int device) {
    for (int f = 0; f < F_COUNT_OF_FUNCTIONS; f++) {
        if (function != NULL && strcmp(function, FN_NAMES[f]) == 0) {
            if (device >= 0 && device <= DEVICE_COUNT) {
                return __atomic_load_n(&calls[f][device], __ATOMIC_SEQ_CST);
            }
            long total = 0;
            for (int d = 0; d <= DEVICE_COUNT; d++) {
                total += __atomic_load_n(&calls[f][d], __ATOMIC_SEQ_CST);
            }
            return total;
        }
    }
    return -1;
}

EXPORT long stub_calls_uninitialized(void) {
    return __atomic_load_n(&calls_uninitialized, __ATOMIC_SEQ_CST);
}

EXPORT long stub_invalid_handles(void) {
    return __atomic_load_n(&invalid_handles, __ATOMIC_SEQ_CST);
}

EXPORT int stub_init_refcount(void) {
    return __atomic_load_n(&init_refcount, __ATOMIC_SEQ_CST);
}

EXPORT unsigned int stub_last_wait_timeout(void) {
    return __atomic_load_n(&last_wait_timeout, __ATOMIC_SEQ_CST);
}

EXPORT int stub_live_event_sets(void) {
    pthread_mutex_lock(&lock);
    int live = 0;
    for (int i = 0; i < MAX_SETS; i++) {
        live += live_sets[i] != NULL;
    }
    pthread_mutex_unlock(&lock);
    return live;
}

EXPORT int stub_queued_events(void) {
    pthread_mutex_lock(&lock);
    int length = queue_length;
    pthread_mutex_unlock(&lock);
    return length;
}

EXPORT long stub_events_taken(void) {
    pthread_mutex_lock(&lock);
    long taken = events_taken;
    pthread_mutex_unlock(&lock);
    return taken;
}

/* The C layout, so the tests can compare it with the offsets the binding reads. */
EXPORT long stub_layout(const char *what) {
    if (strcmp(what, "sizeof(nvmlPciInfo_t)") == 0) return (long)sizeof(nvmlPciInfo_t);
    if (strcmp(what, "nvmlPciInfo_t.domain") == 0) return (long)offsetof(nvmlPciInfo_t, domain);
    if (strcmp(what, "nvmlPciInfo_t.bus") == 0) return (long)offsetof(nvmlPciInfo_t, bus);
    if (strcmp(what, "nvmlPciInfo_t.device") == 0) return (long)offsetof(nvmlPciInfo_t, device);
    if (strcmp(what, "nvmlPciInfo_t.pciDeviceId") == 0) return (long)offsetof(nvmlPciInfo_t, pciDeviceId);
    if (strcmp(what, "nvmlPciInfo_t.busId") == 0) return (long)offsetof(nvmlPciInfo_t, busId);
    if (strcmp(what, "sizeof(nvmlEventData_t)") == 0) return (long)sizeof(nvmlEventData_t);
    if (strcmp(what, "nvmlEventData_t.device") == 0) return (long)offsetof(nvmlEventData_t, device);
    if (strcmp(what, "nvmlEventData_t.eventType") == 0) return (long)offsetof(nvmlEventData_t, eventType);
    if (strcmp(what, "nvmlEventData_t.eventData") == 0) return (long)offsetof(nvmlEventData_t, eventData);
    if (strcmp(what, "nvmlEventData_t.gpuInstanceId") == 0) return (long)offsetof(nvmlEventData_t, gpuInstanceId);
    if (strcmp(what, "nvmlEventData_t.computeInstanceId") == 0)
        return (long)offsetof(nvmlEventData_t, computeInstanceId);
    return -1;
}
