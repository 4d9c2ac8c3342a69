"""Starts a session's local kernel: `python .../kernel/albedo_session_kernel.py -f FILE [options]`.

Run by path, never with `-m`: Python then puts this file's directory first on sys.path, not the
working directory, so nothing in the workspace (the kernel's cwd, which the kernel itself can
write) can stand in for a module while the kernel loads. IPython adds the working directory back
once the kernel is up, as it does for every kernel, so cells import workspace modules as usual.
"""

if __name__ == "__main__":
    from albedo.session_kernel import main

    main()
