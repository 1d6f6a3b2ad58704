"""Serving a trained Transformer with an inference engine. Book: appendix "Serving".

:mod:`txcourse.deploy.ctranslate2` exports a Transformer checkpoint of either
half to a CTranslate2 model folder (``txcourse export --to ctranslate2``);
:mod:`txcourse.deploy.engine` loads such a folder back as a model that
``txcourse translate`` and ``txcourse evaluate`` run like a checkpoint.
``ctranslate2`` (the ``deploy`` extra) is imported inside their functions
only, never when txcourse is imported.
"""
