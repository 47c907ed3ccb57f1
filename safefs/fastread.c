/* safefs._native_read: read_bytes as one plain CPython function, for the hottest path.
 *
 * The read itself is safefs_read_file of safefs/fastpath.c, compiled in here from that one source
 * (#include below): resolve (openat2 or the walk), fstat, read, close, with the GIL released. What
 * this module adds is only the Python side of the call, done in C: a cffi call converts every
 * argument by its declared C type, and its result then has to be cut out of a cffi buffer in
 * Python; here the arguments are taken as they come and the bytes are made in one step.
 *
 * Reader(kind, symlinks, resolve, component_flags, name_resolve, flags, failure, more) copies a
 * resolver's parameters (struct safefs_resolver) and the open flags (from safefs._sys.open_flags;
 * nothing here adds a flag). Its method read(root_fd, rel) returns the content of the regular file
 * ``rel``. A file smaller than SCRATCH_SIZE is read into this thread's scratch buffer and copied
 * into a bytes object once. On a negative code, ``failure(code)`` makes the exception raised (so
 * the mapping of codes to exceptions stays in safefs/_fastpath.py, and no path is in it). A file
 * that does not fit goes to ``more(fd, size, prefix)``, which reads the rest and closes the fd
 * (``prefix``: the bytes already read, or None); if even that call cannot be made, the fd is
 * closed here. Every other path closes it in safefs_read_file.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <pthread.h>

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
/* The rest of fastpath.c (the write, the shims) is the cffi module's; this one needs the read. */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "fastpath.c"
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#define SCRATCH_SIZE (64 * 1024)

/* Each thread's scratch buffer: allocated on its first read, freed when the thread exits. */
static pthread_key_t scratch_key;

static void scratch_free(void *buf)
{
    free(buf);
}

static char *scratch(void)
{
    char *buf = pthread_getspecific(scratch_key);
    if (buf)
        return buf;
    buf = malloc(SCRATCH_SIZE);
    if (!buf)
        return NULL;
    if (pthread_setspecific(scratch_key, buf) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

typedef struct {
    PyObject_HEAD
    struct safefs_resolver r;
    uint64_t flags;
    PyObject *failure;
    PyObject *more;
} Reader;

static int Reader_traverse(Reader *self, visitproc visit, void *arg)
{
    Py_VISIT(self->failure);
    Py_VISIT(self->more);
    return 0;
}

static int Reader_clear(Reader *self)
{
    Py_CLEAR(self->failure);
    Py_CLEAR(self->more);
    return 0;
}

static void Reader_dealloc(Reader *self)
{
    PyObject_GC_UnTrack(self);
    Reader_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Reader(...) is built whole or not at all: there is no __init__ to skip, so no Reader exists
 * without its parameters and callbacks (Reader.__new__(Reader) is a TypeError, not a crash). */
static PyObject *Reader_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "kind",  "symlinks", "resolve", "component_flags", "name_resolve",
                                "flags", "failure",  "more",    NULL };
    int kind, symlinks;
    unsigned long long resolve, component_flags, name_resolve, flags;
    PyObject *failure, *more;
    Reader *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iiKKKKOO:Reader", keywords, &kind, &symlinks,
                                     &resolve, &component_flags, &name_resolve, &flags, &failure,
                                     &more))
        return NULL;
    if (kind != SAFEFS_KIND_OPENAT2 && kind != SAFEFS_KIND_WALK) {
        PyErr_SetString(PyExc_ValueError, "unknown resolver kind");
        return NULL;
    }
    if (!PyCallable_Check(failure) || !PyCallable_Check(more)) {
        PyErr_SetString(PyExc_TypeError, "failure and more must be callable");
        return NULL;
    }
    self = (Reader *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    memset(&self->r, 0, sizeof self->r);
    self->r.kind = kind;
    self->r.symlinks = symlinks;
    self->r.resolve = resolve;
    self->r.component_flags = component_flags;
    self->r.name_resolve = name_resolve;
    self->flags = flags;
    Py_INCREF(failure);
    self->failure = failure;
    Py_INCREF(more);
    self->more = more;
    return (PyObject *)self;
}

/* The exception failure(code) makes, raised. */
static PyObject *raise_failure(Reader *self, long code)
{
    PyObject *exc, *arg = PyLong_FromLong(code);
    if (!arg)
        return NULL;
    exc = PyObject_CallOneArg(self->failure, arg);
    Py_DECREF(arg);
    if (!exc)
        return NULL;
    if (PyExceptionInstance_Check(exc))
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    else
        PyErr_SetString(PyExc_SystemError, "failure() did not return an exception");
    Py_DECREF(exc);
    return NULL;
}

/* SAFEFS_EMORE: the open fd goes to more(), which reads on and closes it; if more() cannot be
 * called at all, it is closed here. */
static PyObject *read_more(Reader *self, const struct safefs_read_out *out, const char *buf)
{
    PyObject *fd, *size, *prefix, *result;
    fd = PyLong_FromLongLong(out->fd);
    size = PyLong_FromLongLong(out->size);
    if (out->got) {
        prefix = PyBytes_FromStringAndSize(buf, (Py_ssize_t)out->got);
    } else {
        prefix = Py_None;
        Py_INCREF(prefix);
    }
    if (!fd || !size || !prefix) {
        Py_XDECREF(fd);
        Py_XDECREF(size);
        Py_XDECREF(prefix);
        close((int)out->fd);
        return NULL;
    }
    result = PyObject_CallFunctionObjArgs(self->more, fd, size, prefix, NULL);
    Py_DECREF(fd);
    Py_DECREF(size);
    Py_DECREF(prefix);
    return result;
}

static PyObject *Reader_read(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    struct safefs_read_out out;
    const char *path;
    char *buf;
    long root_fd, n;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "read() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    root_fd = PyLong_AsLong(args[0]);
    if (root_fd == -1 && PyErr_Occurred())
        return NULL;
    if (root_fd < INT_MIN || root_fd > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "fd out of range");
        return NULL;
    }
    if (!PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "read() takes the path as bytes");
        return NULL;
    }
    path = PyBytes_AS_STRING(args[1]);
    if (strlen(path) != (size_t)PyBytes_GET_SIZE(args[1])) {
        PyErr_SetString(PyExc_ValueError, "embedded null byte");
        return NULL;
    }
    buf = scratch();
    if (!buf)
        return PyErr_NoMemory();
    /* The caller's reference keeps `rel` (and so `path`) alive while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS
    n = safefs_read_file(&self->r, (int)root_fd, path, self->flags, buf, SCRATCH_SIZE, &out);
    Py_END_ALLOW_THREADS
    if (n >= 0)
        return PyBytes_FromStringAndSize(buf, n);
    if (n == SAFEFS_EMORE)
        return read_more(self, &out, buf);
    return raise_failure(self, n);
}

static PyMethodDef Reader_methods[] = {
    { "read", (PyCFunction)(void (*)(void))Reader_read, METH_FASTCALL,
      "read(root_fd, rel): the whole content of the regular file rel beneath root_fd." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "safefs._native_read.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A resolver's whole-file read (see safefs/fastread.c).",
    .tp_new = Reader_new,
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_traverse = (traverseproc)Reader_traverse,
    .tp_clear = (inquiry)Reader_clear,
    .tp_methods = Reader_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "safefs._native_read",
    .m_doc = "read_bytes as one plain CPython function (see safefs/fastread.c).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__native_read(void)
{
    PyObject *m;
    static int key_made;
    if (!key_made) {
        if (pthread_key_create(&scratch_key, scratch_free) != 0)
            return PyErr_NoMemory();
        key_made = 1;
    }
    if (PyType_Ready(&ReaderType) < 0)
        return NULL;
    m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddIntConstant(m, "SCRATCH_SIZE", SCRATCH_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SYMLINKS", SAFEFS_MAX_SYMLINKS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_EAGAIN", SAFEFS_MAX_EAGAIN) < 0 ||
        PyModule_AddObjectRef(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
