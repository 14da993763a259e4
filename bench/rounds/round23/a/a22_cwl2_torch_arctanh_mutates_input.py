# label: hazard silent
# why: torch_arctanh() scales its argument in place (x *= 1 - eps), so AttackCarliniWagnerL2.run() silently rescales the caller's clean image batch and the caller's later distortion measure compares the adversarial image against an already-modified "original".
# source: https://github.com/rwightman/pytorch-nips2017-attack-example/issues/5 (attacks/helpers.py torch_arctanh at 321b9ce980838fed842f57e8f23c16390370b98f)
import torch
import torch.nn as nn
from torch import optim

torch.manual_seed(0)


def reduce_sum(x, keepdim=True):
    for a in reversed(range(1, x.dim())):
        x = x.sum(a, keepdim=keepdim)
    return x


def torch_arctanh(x, eps=1e-6):
    x *= (1. - eps)  # <-- IPL004
    return (torch.log((1 + x) / (1 - x))) * 0.5


def l2_dist(x, y, keepdim=True):
    d = (x - y) ** 2
    return reduce_sum(d, keepdim=keepdim)


def tanh_rescale(x, x_min=-1., x_max=1.):
    return (torch.tanh(x) + 1) * 0.5 * (x_max - x_min) + x_min


class AttackCarliniWagnerL2:
    def __init__(self, targeted=True, max_steps=5):
        self.targeted = targeted
        self.num_classes = 10
        self.confidence = 20
        self.initial_const = 0.1
        self.max_steps = max_steps
        self.clip_min = -1.
        self.clip_max = 1.

    def _loss(self, output, target, dist, scale_const):
        real = (target * output).sum(1)
        other = ((1. - target) * output - target * 10000.).max(1)[0]
        loss1 = torch.clamp(other - real + self.confidence, min=0.)
        loss1 = torch.sum(scale_const * loss1)
        return loss1 + dist.sum()

    def _optimize(self, optimizer, model, input_var, modifier_var, target_var, scale_const_var, input_orig):
        input_adv = tanh_rescale(modifier_var + input_var, self.clip_min, self.clip_max)
        output = model(input_adv)
        dist = l2_dist(input_adv, input_orig, keepdim=False)
        loss = self._loss(output, target_var, dist, scale_const_var)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach(), input_adv.detach()

    def run(self, model, input, target):
        batch_size = input.size(0)
        input_var = torch_arctanh(input)
        input_orig = tanh_rescale(input_var, self.clip_min, self.clip_max)
        target_onehot = torch.zeros(target.size() + (self.num_classes,))
        target_onehot.scatter_(1, target.unsqueeze(1), 1.)
        modifier_var = torch.zeros(input_var.size(), requires_grad=True)
        optimizer = optim.Adam([modifier_var], lr=0.05)
        scale_const_var = torch.ones(batch_size) * self.initial_const
        adv_img = None
        for step in range(self.max_steps):
            loss, adv_img = self._optimize(
                optimizer, model, input_var, modifier_var, target_onehot, scale_const_var, input_orig)
        return adv_img


def main():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    input = torch.rand(2, 3, 8, 8) * 1.8 - 0.9
    target = torch.tensor([3, 7])
    attack = AttackCarliniWagnerL2(targeted=True)
    adv = attack.run(model, input, target)
    # run_attack_cwl2.py: measure the perturbation against the clean images
    distortion = (adv - input).abs().sum()
    return adv, distortion


adv, distortion = main()
