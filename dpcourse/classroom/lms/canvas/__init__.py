"""Canvas: its download read, its REST API, its gradebook import and the feedback upload.

- :mod:`.api`: Canvas's REST API through ``canvasapi`` (``python -m dpcourse canvas pull``);
- :mod:`.push`: grades and feedback comments sent back (``python -m dpcourse canvas push``);
- :mod:`.download`: the zip of *Download Submissions* and the submissions API's JSON, read without trusting them;
- :mod:`.grades`: the gradebook import CSV a grading run writes;
- :mod:`.feedback_zip`: every student's feedback in one *Re-Upload Submissions* zip.
"""
