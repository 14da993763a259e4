# label: hazard raises
# why: the image that requires grad (for an input-gradient map) is sliced into tiles and each tile view is scaled in place, an in-place write into a view of a leaf tensor that requires grad.
# source: https://github.com/pytorch/pytorch/issues/39150
import torch
import torch.nn as nn

torch.manual_seed(0)


class TileNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(4, 2)

    def forward(self, tile):
        return self.head(self.features(tile).flatten(1))


def split_into_tiles(image, tile=10):
    tiles = []
    _, _, h, w = image.shape
    for i in range(0, h, tile):
        for j in range(0, w, tile):
            tiles.append(image[:, :, i:i + tile, j:j + tile])
    return tiles


net = TileNet()
image = torch.ones(1, 3, 20, 20).requires_grad_()

scores = []
for tile in split_into_tiles(image):
    tile *= 10  # <-- IPL003: in-place on a view of the leaf image that requires grad
    scores.append(net(tile))

total = torch.stack(scores).sum()
total.backward()
saliency = image.grad.abs().amax(dim=1)
