# label: hazard silent
# why: the extractor keeps the conv1 output o1 as the pre-activation feature for the content loss, then applies ReLU in place to o1 (h1 and o1 are the same storage), so the stored feature silently becomes the rectified map and the loss/gradients differ.
# source: https://wpsshop.cn/w/%E5%9C%A8%E7%BA%BF%E9%97%AE%E7%AD%945/article/detail/963768
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureExtractor(nn.Module):
    """conv -> relu stack that also exposes the pre-activation conv maps."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, kernel_size=3)
        self.conv2 = nn.Conv2d(3, 4, kernel_size=3)

    def forward(self, input):
        feats = {}
        o1 = self.conv1(input)
        feats["conv1"] = o1
        h1 = F.relu(o1, inplace=True)  # <-- IPL002
        o2 = self.conv2(h1)
        feats["conv2"] = o2
        feats["relu2"] = F.relu(o2)
        return feats


def content_loss(feats_x, feats_y, layers=("conv1", "conv2")):
    loss = 0.0
    for name in layers:
        loss = loss + F.mse_loss(feats_x[name], feats_y[name])
    return loss


def main():
    net = FeatureExtractor()
    for p in net.parameters():
        p.requires_grad_(False)
    target = torch.randn(1, 3, 7, 7)
    image = torch.randn(1, 3, 7, 7, requires_grad=True)
    with torch.no_grad():
        target_feats = {k: v.clone() for k, v in net(target).items()}
    loss = content_loss(net(image), target_feats)
    loss.backward()
    return loss.detach(), image.grad


loss, image_grad = main()
