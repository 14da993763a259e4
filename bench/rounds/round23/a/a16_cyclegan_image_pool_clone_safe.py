# label: safe
# why: ImagePool stores image.data copies and, when it swaps an entry, returns self.images[random_id].clone() before overwriting the slot, so the tensor handed to the discriminator is never the one the pool later replaces; the fake fed to D is additionally detached.
# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/blob/master/util/image_pool.py
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class ImagePool():
    """This class implements an image buffer that stores previously generated images."""

    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:  # create an empty pool
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:  # if the buffer size is 0, do nothing
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image.data, 0)
            if self.num_imgs < self.pool_size:   # if the buffer is not full; keep inserting current images to the buffer
                self.num_imgs = self.num_imgs + 1
                self.images.append(image)
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:  # by 50% chance, the buffer will return a previously stored image, and insert the current image into the buffer
                    random_id = random.randint(0, self.pool_size - 1)  # randint is inclusive
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image
                    return_images.append(tmp)
                else:       # by another 50% chance, the buffer will return the current image
                    return_images.append(image)
        return_images = torch.cat(return_images, 0)   # collect all the images and return
        return return_images


def backward_D_basic(netD, real, fake, criterionGAN):
    pred_real = netD(real)
    loss_D_real = criterionGAN(pred_real, torch.ones_like(pred_real))
    pred_fake = netD(fake.detach())
    loss_D_fake = criterionGAN(pred_fake, torch.zeros_like(pred_fake))
    loss_D = (loss_D_real + loss_D_fake) * 0.5
    loss_D.backward()
    return loss_D


def main():
    netG_A = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Tanh())
    netD_A = nn.Sequential(nn.Conv2d(3, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True), nn.Conv2d(4, 1, 3, padding=1))
    criterionGAN = nn.MSELoss()
    fake_B_pool = ImagePool(2)
    losses = []
    for _ in range(4):
        real_A = torch.rand(2, 3, 8, 8)
        real_B = torch.rand(2, 3, 8, 8)
        fake_B = netG_A(real_A)
        netD_A.zero_grad()
        fake_B_pooled = fake_B_pool.query(fake_B)
        losses.append(backward_D_basic(netD_A, real_B, fake_B_pooled, criterionGAN).detach())
    return torch.stack(losses), netD_A[0].weight.grad


losses, d_grad = main()
