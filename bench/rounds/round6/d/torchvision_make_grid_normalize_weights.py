# label: hazard silent
# why: make_grid(normalize=True) rescales its input in place; called on model.conv1.weight.data to log filters mid-training, it silently overwrites the live weights (3-channel input gets no torch.cat copy)
# source: https://github.com/pytorch/vision/issues/217 (fixed by https://github.com/pytorch/vision/pull/241, torchvision/utils.py make_grid)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

irange = range
torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2,
              normalize=False, range=None, scale_each=False, pad_value=0):
    if not (torch.is_tensor(tensor) or
            (isinstance(tensor, list) and all(torch.is_tensor(t) for t in tensor))):
        raise TypeError('tensor or list of tensors expected, got {}'.format(type(tensor)))

    # if list of tensors, convert to a 4D mini-batch Tensor
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)

    if tensor.dim() == 2:  # single image H x W
        tensor = tensor.view(1, tensor.size(0), tensor.size(1))
    if tensor.dim() == 3:  # single image
        if tensor.size(0) == 1:  # if single-channel, convert to 3-channel
            tensor = torch.cat((tensor, tensor, tensor), 0)
        return tensor
    if tensor.dim() == 4 and tensor.size(1) == 1:  # single-channel images
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        if range is not None:
            assert isinstance(range, tuple), \
                "range has to be a tuple (min, max) if specified. min and max are numbers"

        def norm_ip(img, min, max):
            img.clamp_(min=min, max=max)  # <-- IPL004, IPL007: img is a view of the caller's weight.data
            img.add_(-min).div_(max - min)  # <-- IPL004, IPL007: rescales the live conv weights in place

        def norm_range(t, range):
            if range is not None:
                norm_ip(t, range[0], range[1])
            else:
                norm_ip(t, t.min(), t.max())

        if scale_each is True:
            for t in tensor:  # loop over mini-batch dimension
                norm_range(t, range)
        else:
            norm_range(tensor, range)

    # make the mini-batch of images into a grid
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new(3, height * ymaps + padding, width * xmaps + padding).fill_(pad_value)
    k = 0
    for y in irange(ymaps):
        for x in irange(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding)\
                .narrow(2, x * width + padding, width - padding)\
                .copy_(tensor[k])
            k = k + 1
    return grid


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        return self.fc(x.view(x.size(0), -1))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images = torch.randn(4, 3, 8, 8)
labels = torch.tensor([0, 1, 1, 0])

losses = []
logged_filters = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    # visualise first-layer filters every step (visdom / tensorboard in the report)
    logged_filters.append(make_grid(model.conv1.weight.data, normalize=True, scale_each=True))

losses = torch.stack(losses)
conv1_weight = model.conv1.weight.detach().clone()
