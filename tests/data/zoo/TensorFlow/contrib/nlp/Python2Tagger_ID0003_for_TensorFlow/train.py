# Written for Python 2, as a few zoo entries are: it cannot start on Python 3.
import tensorflow as tf
print "building the tagger"
