# label: hazard raises
# why: the postprocess pipeline's Lambda multiplies its input in place, and it is handed opt_img[0], a view of the optimised image leaf that requires grad.
# source: https://github.com/PacktPublishing/Modern-Computer-Vision-with-PyTorch/issues/36
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, tensor):
        return (tensor - self.mean) / self.std


preprocess = Compose([
    Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    Lambda(lambda x: x.mul_(255.)),
])
postprocess = Compose([
    Lambda(lambda x: x.mul_(1. / 255)),  # <-- IPL003: x is opt_img[0], a view of a leaf that requires grad
    Normalize(mean=[-0.485 / 0.229, -0.456 / 0.224, -0.406 / 0.225], std=[1 / 0.229, 1 / 0.224, 1 / 0.225]),
])


class GramMatrix(nn.Module):
    def forward(self, input):
        b, c, h, w = input.size()
        feat = input.view(b, c, h * w)
        G = feat @ feat.transpose(1, 2)
        G.div_(h * w)
        return G


class GramMSELoss(nn.Module):
    def forward(self, input, target):
        out = F.mse_loss(GramMatrix()(input), target)
        return out


class vgg19_modified(nn.Module):
    def __init__(self):
        super(vgg19_modified, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
            nn.AvgPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
        )

    def forward(self, x, layers=[]):
        order = sorted(layers)
        _results, results = [], []
        for ix, model in enumerate(self.features):
            x = model(x)
            if ix in layers:
                _results.append(x)
        for l in layers:
            results.append(_results[order.index(l)])
        return results


vgg = vgg19_modified()
for p in vgg.parameters():
    p.requires_grad = False

style_image = preprocess(torch.rand(3, 16, 16))[None]
content_image = preprocess(torch.rand(3, 16, 16))[None]
opt_img = content_image.data.clone()
opt_img.requires_grad = True

style_layers = [1, 3]
content_layers = [6]
loss_layers = style_layers + content_layers
loss_fns = [GramMSELoss()] * len(style_layers) + [nn.MSELoss()] * len(content_layers)
weights = [1e-6, 1e-6, 1e-4]

style_targets = [GramMatrix()(A).detach() for A in vgg(style_image, style_layers)]
content_targets = [A.detach() for A in vgg(content_image, content_layers)]
targets = style_targets + content_targets

optimizer = torch.optim.Adam([opt_img], lr=0.5)
for iters in range(3):
    optimizer.zero_grad()
    out = vgg(opt_img, loss_layers)
    layer_losses = [weights[a] * loss_fns[a](A, targets[a]) for a, A in enumerate(out)]
    loss = sum(layer_losses)
    loss.backward()
    optimizer.step()

out_img = postprocess(opt_img[0]).permute(1, 2, 0)
