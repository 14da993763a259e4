# label: hazard silent
# why: proximity_cost rescales width/length with *=, but they are column views of the caller's car_size tensor, so every call shrinks the batch's car sizes in place and later cost evaluations (planning / policy training) use wrong proximity masks
# source: https://github.com/Atcold/pytorch-PPUU/commit/a3a02a86f52f67a484796c1aa9b0ade01b369992
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def proximity_cost(images, states, car_size=(6.4, 14.3), green_channel=1, unnormalize=False, s_mean=None, s_std=None):
    SCALE = 0.25
    safe_factor = 1.5
    bsize, npred, nchannels, crop_h, crop_w = images.size(0), images.size(1), images.size(2), images.size(3), images.size(4)
    images = images.view(bsize * npred, nchannels, crop_h, crop_w)
    states = states.view(bsize * npred, 4).clone()

    if unnormalize:
        states *= (1e-8 + s_std.view(1, 4).expand(states.size()))
        states += s_mean.view(1, 4).expand(states.size())

    speed = states[:, 2:].norm(2, 1) * SCALE  # pixel/s
    width, length = car_size[:, 0], car_size[:, 1]  # feet
    width *= SCALE * (0.3048 * 24 / 3.7)  # <-- IPL004: scales the caller's car_size column in place
    length *= SCALE * (0.3048 * 24 / 3.7)  # <-- IPL004: same for the length column

    safe_distance = torch.abs(speed) * safe_factor + (1 * 24 / 3.7) * SCALE
    alpha = 1 * SCALE * (24 / 3.7)

    max_x = torch.ceil((crop_h - torch.clamp(length - alpha, min=0)) / 2)
    max_y = torch.ceil((crop_w - torch.clamp(width - alpha, min=0)) / 2)
    max_x = max_x.view(bsize, 1).expand(bsize, npred).contiguous().view(bsize * npred)
    max_y = max_y.view(bsize, 1).expand(bsize, npred).contiguous().view(bsize * npred)
    min_x = torch.clamp(max_x - safe_distance, min=0)
    min_y = torch.ceil(crop_w / 2 - width)
    min_y = min_y.view(bsize, 1).expand(bsize, npred).contiguous().view(bsize * npred)

    x_filter = (1 - torch.abs(torch.linspace(-1, 1, crop_h))) * crop_h / 2
    x_filter = x_filter.unsqueeze(0).expand(bsize * npred, crop_h)
    x_filter = torch.min(x_filter, max_x.view(bsize * npred, 1).expand(x_filter.size()))
    x_filter = torch.max(x_filter, min_x.view(bsize * npred, 1))
    x_filter = (x_filter - min_x.view(bsize * npred, 1)) / (max_x - min_x).view(bsize * npred, 1)
    y_filter = (1 - torch.abs(torch.linspace(-1, 1, crop_w))) * crop_w / 2
    y_filter = y_filter.view(1, crop_w).expand(bsize * npred, crop_w)
    y_filter = torch.min(y_filter, max_y.view(bsize * npred, 1))
    y_filter = torch.max(y_filter, min_y.view(bsize * npred, 1))
    y_filter = (y_filter - min_y.view(bsize * npred, 1)) / (max_y.view(bsize * npred, 1) - min_y.view(bsize * npred, 1))
    proximity_mask = torch.bmm(x_filter.view(-1, crop_h, 1), y_filter.view(-1, 1, crop_w))
    proximity_mask = proximity_mask.view(bsize, npred, crop_h, crop_w)
    images = images.view(bsize, npred, nchannels, crop_h, crop_w)
    costs = torch.sum((proximity_mask * images[:, :, green_channel].float()).view(bsize, npred, -1), 2)
    return costs, proximity_mask


class Policy(nn.Module):
    def __init__(self, n_inputs, n_actions=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_inputs, 16), nn.ReLU(), nn.Linear(16, n_actions))

    def forward(self, images, states):
        return self.net(torch.cat([images.flatten(1), states], dim=1))


def unroll(policy, input_images, input_states, npred=3):
    pred_images, pred_states = [], []
    images, states = input_images, input_states
    for t in range(npred):
        a = policy(images, states)
        states = states + torch.cat([states[:, 2:] * 0.1, a], dim=1)
        images = torch.roll(images, shifts=1, dims=-1) * torch.sigmoid(a[:, :1]).view(-1, 1, 1, 1)
        pred_images.append(images)
        pred_states.append(states)
    return torch.stack(pred_images, 1), torch.stack(pred_states, 1)


bsize, crop_h, crop_w = 2, 18, 9
policy = Policy(3 * crop_h * crop_w + 4)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
s_mean, s_std = torch.tensor([0.0, 0.0, 1.0, 0.5]), torch.tensor([1.0, 1.0, 2.0, 1.0])
batch = {'images': torch.rand(bsize, 3, crop_h, crop_w), 'states': torch.randn(bsize, 4),
         'car_sizes': torch.tensor([[6.4, 14.3], [7.0, 16.0]])}

costs_per_iter = []
for it in range(2):
    pred_images, pred_states = unroll(policy, batch['images'], batch['states'])
    proximity, _ = proximity_cost(pred_images, pred_states, batch['car_sizes'], unnormalize=True, s_mean=s_mean, s_std=s_std)
    loss = proximity.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    costs_per_iter.append(proximity.detach())

car_sizes_after = batch['car_sizes']
