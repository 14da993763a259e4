# label: safe
# why: the PyTorch-1.x fix shifts and scales out of place first, so the per-channel slice writes go into a fresh mul result that no backward saved, and autograd records them (CopySlices)
# source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4 (fixed in commit 82fdf946 "Fixed bug in normalize_and_scale for proper usage with PyTorch V1+", GAP_clf.py)
import torch
import torch.nn as nn

torch.manual_seed(0)

mean_arr = [0.485, 0.456, 0.406]
stddev_arr = [0.229, 0.224, 0.225]
mag_in = 10.0


class opt:
    foolmodel = 'vgg16'
    batchSize = 2
    testBatchSize = 2


class ResnetGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True),
                                   nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.model(x)


def normalize_and_scale(delta_im, mode='train'):
    if opt.foolmodel == 'incv3':
        delta_im = nn.ConstantPad2d((0, -1, -1, 0), 0)(delta_im)  # crop slightly to match inception

    delta_im = delta_im + 1  # now 0..2
    delta_im = delta_im * 0.5  # now 0..1

    # normalize image color channels
    for c in range(3):
        delta_im[:, c, :, :] = (delta_im[:, c, :, :] - mean_arr[c]) / stddev_arr[c]

    # threshold each channel of each image in deltaIm according to inf norm
    # do on a per image basis as the inf norm of each image could be different
    bs = opt.batchSize if (mode == 'train') else opt.testBatchSize
    for i in range(bs):
        # do per channel l_inf normalization
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].detach().abs().max()
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :] = delta_im[i, ci, :, :] * min(1.0, float(mag_in_scaled_c / l_inf_channel))

    return delta_im


netG = ResnetGenerator()
pretrained_clf = nn.Sequential(nn.Flatten(), nn.Linear(3 * 6 * 6, 5))
for p in pretrained_clf.parameters():
    p.requires_grad = False
criterion_pre = nn.CrossEntropyLoss()
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)

image = torch.randn(2, 3, 6, 6)
noise_tr = torch.rand(1, 3, 6, 6)

# least likely class in nontargeted case
pretrained_label_float = pretrained_clf(image)
_, target_label = torch.min(pretrained_label_float, 1)

delta_im = netG(image)
delta_im = normalize_and_scale(delta_im, 'train')

netG.zero_grad()
recons = torch.add(image, delta_im)
output_pretrained = pretrained_clf(recons)

# attempt to get closer to least likely class, or target
loss = torch.log(criterion_pre(output_pretrained, target_label))
loss.backward()
optimizerG.step()
