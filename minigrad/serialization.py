"""placeholder"""
def save(obj, path): raise NotImplementedError
def load(path): raise NotImplementedError
