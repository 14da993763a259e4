# label: hazard silent
# why: For the epoch-end sample the script calls ema_model.copy_to(unet.parameters()) on the model being trained; copy_to writes the EMA weights into the live parameters in place, so training silently resumes from the averaged weights.
# source: https://github.com/huggingface/diffusers/issues/2321
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EMAModel:
    def __init__(self, parameters, decay=0.9999, min_decay=0.0, update_after_step=0, inv_gamma=1.0, power=2 / 3):
        parameters = list(parameters)
        self.shadow_params = [p.clone().detach() for p in parameters]
        self.decay = decay
        self.min_decay = min_decay
        self.update_after_step = update_after_step
        self.inv_gamma = inv_gamma
        self.power = power
        self.optimization_step = 0

    def get_decay(self, optimization_step):
        step = max(0, optimization_step - self.update_after_step - 1)
        value = 1 - (1 + step / self.inv_gamma) ** -self.power
        if step <= 0:
            return 0.0
        return max(self.min_decay, min(value, self.decay))

    @torch.no_grad()
    def step(self, parameters):
        parameters = list(parameters)
        self.optimization_step += 1
        decay = self.get_decay(self.optimization_step)
        one_minus_decay = 1 - decay
        for s_param, param in zip(self.shadow_params, parameters):
            if param.requires_grad:
                s_param.sub_(one_minus_decay * (s_param - param))
            else:
                s_param.copy_(param)

    def copy_to(self, parameters):
        parameters = list(parameters)
        for s_param, param in zip(self.shadow_params, parameters):
            param.data.copy_(s_param.data)  # <-- IPL004: overwrites the caller's live training parameters


class UNet2DModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(3, 8, 3, padding=1)
        self.mid = nn.Sequential(nn.GroupNorm(2, 8), nn.SiLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.conv_out = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, sample, timesteps):
        h = self.conv_in(sample)
        h = h + self.mid(h) * (1.0 + timesteps.float().view(-1, 1, 1, 1) / 1000)
        return self.conv_out(h)


class DDPMPipeline:
    def __init__(self, unet):
        self.unet = unet

    @torch.no_grad()
    def __call__(self, batch_size=1, num_inference_steps=2):
        image = torch.randn(batch_size, 3, 8, 8)
        for t in reversed(range(num_inference_steps)):
            model_output = self.unet(image, torch.full((batch_size,), t))
            image = image - 0.1 * model_output
        return (image / 2 + 0.5).clamp(0, 1)


model = UNet2DModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
ema_model = EMAModel(model.parameters(), decay=0.9, inv_gamma=1.0, power=3 / 4)

clean_images = torch.rand(4, 3, 8, 8) * 2 - 1
losses = []
for epoch in range(2):
    for step in range(3):
        noise = torch.randn(clean_images.shape)
        timesteps = torch.randint(0, 1000, (clean_images.shape[0],)).long()
        noisy_images = clean_images + 0.1 * noise
        model_output = model(noisy_images, timesteps)
        loss = F.mse_loss(model_output, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        ema_model.step(model.parameters())
        losses.append(loss.detach())

    # generate sample images for visual inspection
    unet = model
    ema_model.copy_to(unet.parameters())
    pipeline = DDPMPipeline(unet=unet)
    images = pipeline(batch_size=2)

final_conv_out_weight = model.conv_out.weight.detach().clone()
loss_history = torch.stack(losses)
