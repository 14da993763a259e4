# label: hazard silent
# why: the display transform's Denormalize multiplies and shifts, in place, the tensor it is given, and it is given image_var[0].data / x_[0].data, which share storage with the image and the optimized input, so each displayed iteration silently corrupts the optimization.
# source: https://github.com/ruthcfong/invert/issues/2 (unadversarial.py in commit cabcefd13614ae75d01b390ea3a10a094542a826)
import torch
import torch.nn as nn

torch.manual_seed(0)

mu = [0.485, 0.456, 0.406]
sigma = [0.229, 0.224, 0.225]


def alpha_prior(x, alpha=2.):
    return 1. / x.view(-1).size(0) * (torch.abs(x.view(-1) ** alpha).sum()) ** (1. / alpha)


def tv_norm(x, beta=2.):
    assert (x.size(0) == 1)
    img = x[0]
    dy = -img[:, :-1, :] + img[:, 1:, :]
    dx = -img[:, :, :-1] + img[:, :, 1:]
    return 1. / x.view(-1).size(0) * ((dx[:, 1:, :].pow(2) + dy[:, :, 1:].pow(2)).pow(beta / 2.)).sum()


def norm_loss(input, target, selector, alpha=2.):
    return alpha_prior(selector * (input - target), alpha=alpha)


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Denormalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.mul_(s).add_(m)  # <-- IPL004, IPL007: rescales the caller's tensor (a .data alias of image_var / x_) in place
        return tensor


class Clip(object):
    def __call__(self, tensor):
        t = tensor.clone()
        t[t > 1] = 1
        t[t < 0] = 0
        return t


def get_pytorch_module(net, blob):
    curr_m = net
    for m in blob.split('.'):
        curr_m = curr_m._modules.get(m)
    return curr_m


def invert(img_, layer='features.1', alpha=6, beta=2, alpha_lambda=1e-5, tv_lambda=1e-5,
           epochs=3, learning_rate=1e-1, momentum=0.9, display_iter=1):
    detransform = Compose([
        Denormalize(mu, sigma),
        Clip(),
    ])
    shown = []

    model = nn.Sequential()
    model.add_module('features', nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1)))
    model.add_module('pool', nn.AdaptiveAvgPool2d(1))
    model.eval()

    activations = []

    def hook_acts(module, input, output):
        activations.append(output)

    def get_acts(model, input):
        del activations[:]
        _ = model(input)
        assert (len(activations) == 1)
        return activations[0]

    image_var = img_
    module = get_pytorch_module(model, layer)
    module.register_forward_hook(hook_acts)
    ref_acts = get_acts(model, image_var).detach()
    selector_var = torch.ones_like(ref_acts)

    x_ = torch.randn(*img_.size()).mul(0.1).requires_grad_(True)
    combine_f = lambda x: image_var + x
    alpha_f = lambda x: -1 * alpha_prior(x, alpha=alpha)
    loss_f = lambda x: norm_loss(x, ref_acts, selector_var)
    tv_f = lambda x: tv_norm(x, beta=beta)

    optimizer = torch.optim.SGD([x_], lr=learning_rate, momentum=momentum)

    for i in range(epochs):
        input_var = combine_f(x_)
        acts = get_acts(model, input_var)

        alpha_term = alpha_f(x_)
        loss_term = loss_f(acts)
        tv_term = tv_f(x_)

        tot_loss = loss_term + alpha_lambda * alpha_term + tv_lambda * tv_term

        optimizer.zero_grad()
        tot_loss.backward()
        optimizer.step()

        x_.data.clamp_(0, 1)

        if display_iter is not None and (i + 1) % display_iter == 0:
            shown.append(detransform(image_var[0].data.cpu()))
            shown.append(detransform(x_[0].data.cpu()))
            shown.append(detransform(input_var[0].data.cpu()))

    return x_.detach().clone(), tot_loss.detach(), image_var.clone(), torch.stack(shown)


img = torch.randn(1, 3, 6, 6)
x_final, final_loss, image_after, shown_images = invert(img)
