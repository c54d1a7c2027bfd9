"""The manager's half of image pre-pull: ImagePullJob, ImageListPullJob and NodeImage controllers
and webhooks (OpenKruise ``pkg/controller/{imagepulljob,imagelistpulljob,nodeimage}``,
``pkg/webhook/{imagepulljob,imagelistpulljob,nodeimage}``). The node daemon
(:mod:`kruise.daemon.imagepuller`) does the pulling; the two halves meet only in NodeImage objects.
"""
