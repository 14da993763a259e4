# label: safe
# why: the fix hands the ControlNet a clone of the image slice, so the tensors its RMSNorm saves are independent of image, and the later in-place slice write only touches the output of an add that no backward formula needs.
# source: https://github.com/modelscope/DiffSynth-Studio/pull/844 (commit 8dae8d7bc82864ae1580b52a5dd2f7f99e9c6a92)
import torch
import torch.nn as nn

torch.manual_seed(0)


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps, elementwise_affine=True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones((dim,))) if elementwise_affine else None

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        variance = hidden_states.to(torch.float32).square().mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        hidden_states = hidden_states.to(input_dtype)
        if self.weight is not None:
            hidden_states = hidden_states * self.weight
        return hidden_states


class BlockWiseControlBlock(torch.nn.Module):
    # [linear, gelu, linear]
    def __init__(self, dim: int = 3072):
        super().__init__()
        self.x_rms = RMSNorm(dim, eps=1e-6)
        self.y_rms = RMSNorm(dim, eps=1e-6)
        self.input_proj = nn.Linear(dim, dim)
        self.act = nn.GELU()
        self.output_proj = nn.Linear(dim, dim)

    def forward(self, x, y):
        x, y = self.x_rms(x), self.y_rms(y)
        x = self.input_proj(x + y)
        x = self.act(x)
        x = self.output_proj(x)
        return x


class QwenImageBlockWiseControlNet(torch.nn.Module):
    def __init__(self, num_layers: int = 2, in_dim: int = 16, dim: int = 32):
        super().__init__()
        self.img_in = nn.Linear(in_dim, dim)
        self.controlnet_blocks = nn.ModuleList([BlockWiseControlBlock(dim) for _ in range(num_layers)])

    def process_controlnet_conditioning(self, controlnet_conditioning):
        return self.img_in(controlnet_conditioning)

    def blockwise_forward(self, img, controlnet_conditioning, block_id):
        return self.controlnet_blocks[block_id](img, controlnet_conditioning)


class ControlNetInput:
    def __init__(self, controlnet_id=0, scale=1.0, start=1.0, end=0.0):
        self.controlnet_id, self.scale, self.start, self.end = controlnet_id, scale, start, end


class MultiControlNet(torch.nn.Module):
    def __init__(self, models):
        super().__init__()
        self.models = torch.nn.ModuleList(models)

    def preprocess(self, controlnet_inputs, conditionings, **kwargs):
        return [self.models[ci.controlnet_id].process_controlnet_conditioning(c) for ci, c in zip(controlnet_inputs, conditionings)]

    def blockwise_forward(self, image, conditionings, controlnet_inputs, progress_id, num_inference_steps, block_id, **kwargs):
        res = 0
        for controlnet_input, conditioning in zip(controlnet_inputs, conditionings):
            progress = (num_inference_steps - 1 - progress_id) / max(num_inference_steps - 1, 1)
            if progress > controlnet_input.start + (1e-4) or progress < controlnet_input.end - (1e-4):
                continue
            model_output = self.models[controlnet_input.controlnet_id].blockwise_forward(image, conditioning, block_id)
            res = res + model_output * controlnet_input.scale
        return res


class QwenImageTransformerBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.img_norm = nn.LayerNorm(dim)
        self.img_mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.txt_mlp = nn.Linear(dim, dim)

    def forward(self, image, text, temb):
        image = image + self.img_mlp(self.img_norm(image) + temb[:, None])
        text = text + self.txt_mlp(text)
        return text, image


class QwenImageDiT(nn.Module):
    def __init__(self, in_dim=16, dim=32, num_layers=2):
        super().__init__()
        self.img_in = nn.Linear(in_dim, dim)
        self.transformer_blocks = nn.ModuleList([QwenImageTransformerBlock(dim) for _ in range(num_layers)])
        self.norm_out = nn.LayerNorm(dim)
        self.proj_out = nn.Linear(dim, in_dim)


def model_fn_qwen_image(dit, blockwise_controlnet, latents, text, conditioning, image_seq_len,
                        blockwise_controlnet_inputs=None, blockwise_controlnet_conditioning=None,
                        progress_id=0, num_inference_steps=1):
    image = dit.img_in(latents)
    if blockwise_controlnet_conditioning is not None:
        blockwise_controlnet_conditioning = blockwise_controlnet.preprocess(
            blockwise_controlnet_inputs, blockwise_controlnet_conditioning)

    for block_id, block in enumerate(dit.transformer_blocks):
        text, image = block(image=image, text=text, temb=conditioning)
        if blockwise_controlnet_conditioning is not None:
            image_slice = image[:, :image_seq_len].clone()
            controlnet_output = blockwise_controlnet.blockwise_forward(
                image=image_slice, conditionings=blockwise_controlnet_conditioning,
                controlnet_inputs=blockwise_controlnet_inputs, block_id=block_id,
                progress_id=progress_id, num_inference_steps=num_inference_steps,
            )
            image[:, :image_seq_len] = image_slice + controlnet_output

    image = dit.norm_out(image)
    image = dit.proj_out(image)
    image = image[:, :image_seq_len]
    return image


def main():
    dit = QwenImageDiT()
    controlnet = MultiControlNet([QwenImageBlockWiseControlNet()])
    latents = torch.randn(2, 12, 16)
    text = torch.randn(2, 5, 32)
    conditioning = torch.randn(2, 32)
    control = [torch.randn(2, 8, 16)]
    noise = torch.randn(2, 8, 16)
    noise_pred = model_fn_qwen_image(dit, controlnet, latents, text, conditioning, image_seq_len=8,
                                     blockwise_controlnet_inputs=[ControlNetInput()],
                                     blockwise_controlnet_conditioning=control)
    loss = torch.nn.functional.mse_loss(noise_pred, noise)
    loss.backward()
    return noise_pred.detach(), controlnet.models[0].img_in.weight.grad


noise_pred, img_in_grad = main()
