"""The ops: each one's forward, saved values, backward and jvp formulas in one small class.

* ``core.py``      how an op runs and records its node (``apply_op``), type promotion
* ``pointwise.py`` arithmetic, powers, activations, comparisons
* ``reduction.py`` sum, mean, max/min, var/std, ...
* ``linalg.py``    matmul and its ATen cousins (dot, mv, mm, bmm, addmm)
* ``shape.py``     views, transposes, indexing, cat/stack/split, dtype casts
* ``inplace.py``   ``add_``, ``mul_``, ``zero_``, ...
* ``activation.py`` softmax, log_softmax, losses, linear
* ``factories.py`` ``tensor``, ``zeros``, ``randn``, ...
"""
