# label: hazard silent
# why: normalize_and_scale rescales the generator's Tanh output through .data, which Tanh saved for backward, so the generator's gradients are computed from the rescaled values instead of the real tanh output.
# source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4 (code: GAP_clf.py normalize_and_scale / train)
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

mean_arr = [0.485, 0.456, 0.406]
stddev_arr = [0.229, 0.224, 0.225]
mag_in = 10.0
batchSize = 2
center_crop = 4


class ResnetGenerator(nn.Module):
    def __init__(self, input_nc=3, output_nc=3, ngf=4):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(input_nc, ngf, kernel_size=3, padding=1),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.Conv2d(ngf, output_nc, kernel_size=3, padding=1),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.model(input)


def normalize_and_scale(delta_im, mode='train'):
    delta_im.data += 1  # <-- IPL007: .data write to the Tanh output saved for backward (now 0..2)
    delta_im.data *= 0.5  # <-- IPL007: .data write to the Tanh output saved for backward (now 0..1)

    # normalize image color channels
    for c in range(3):
        delta_im.data[:, c, :, :] = (delta_im.data[:, c, :, :] - mean_arr[c]) / stddev_arr[c]  # <-- IPL007: .data write hides the change from autograd

    # threshold each channel of each image in deltaIm according to inf norm
    bs = batchSize
    for i in range(bs):
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].data.abs().max()
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :].data *= min(1.0, float(mag_in_scaled_c / l_inf_channel))  # <-- IPL007: .data write hides the change from autograd

    return delta_im


netG = ResnetGenerator()
pretrained_clf = nn.Sequential(nn.Flatten(), nn.Linear(3 * center_crop * center_crop, 5))
for p in pretrained_clf.parameters():
    p.requires_grad = False
criterion_pre = nn.CrossEntropyLoss()
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

noise_tr = torch.rand(batchSize, 3, center_crop, center_crop)
image = torch.randn(batchSize, 3, center_crop, center_crop)

# least likely class in nontargeted case
pretrained_label_float = pretrained_clf(image)
_, target_label = torch.min(pretrained_label_float, 1)

delta_im = netG(noise_tr)
delta_im = normalize_and_scale(delta_im, 'train')

netG.zero_grad()
recons = torch.add(image, delta_im)

# do clamping per channel
for cii in range(3):
    recons.data[:, cii, :, :] = recons.data[:, cii, :, :].clamp(image.data[:, cii, :, :].min(), image.data[:, cii, :, :].max())

output_pretrained = pretrained_clf(recons)
loss = torch.log(criterion_pre(output_pretrained, target_label))
loss.backward()
grad_first_conv = netG.model[0].weight.grad.clone()
optimizerG.step()
