# label: hazard raises
# why: init_vgg16 copies the Lua VGG weights with dst[:] = src[:], an in-place write into a view of an nn.Parameter (a leaf that requires grad) while grad mode is on.
# source: https://github.com/bengxy/FastNeuralStyle/issues/1 (fixed in commit f2afa8f)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Vgg16Part(nn.Module):
    def __init__(self):
        super(Vgg16Part, self).__init__()
        self.conv1_1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1)
        self.conv1_2 = nn.Conv2d(8, 8, kernel_size=3, stride=1, padding=1)
        self.conv2_1 = nn.Conv2d(8, 16, kernel_size=3, stride=1, padding=1)
        self.conv2_2 = nn.Conv2d(16, 16, kernel_size=3, stride=1, padding=1)

    def forward(self, X):
        h = F.relu(self.conv1_1(X))
        h = F.relu(self.conv1_2(h))
        relu1_2 = h
        h = F.max_pool2d(h, kernel_size=2, stride=2)
        h = F.relu(self.conv2_1(h))
        h = F.relu(self.conv2_2(h))
        relu2_2 = h
        return [relu1_2, relu2_2]


class LuaModel(object):
    """Stand-in for the object returned by load_lua('vgg16.t7')."""

    def __init__(self, reference):
        self._params = [p.detach().clone() * 0.5 for p in reference.parameters()]

    def parameters(self):
        return [self._params, None]


def init_vgg16(vgglua):
    """load the vgg16 model feature"""
    vgg = Vgg16Part()
    for (src, dst) in zip(vgglua.parameters()[0], vgg.parameters()):
        dst[:] = src[:]  # <-- IPL003
    return vgg


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def main():
    vgglua = LuaModel(Vgg16Part())
    vgg_model = init_vgg16(vgglua)
    X = torch.rand(2, 3, 8, 8, requires_grad=True)
    feature_generated = vgg_model(X)
    L = sum(gram_matrix(f).sum() for f in feature_generated)
    L.backward()
    return L.detach(), X.grad


L, x_grad = main()
