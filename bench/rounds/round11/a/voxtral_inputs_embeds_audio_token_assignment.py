# label: hazard raises
# why: with the PEFT input-require-grads hook the embedding output becomes a leaf that requires grad, and Voxtral then writes the audio embeddings into it with an in-place masked assignment.
# source: https://github.com/huggingface/transformers/issues/40488
import torch
import torch.nn as nn

torch.manual_seed(0)


class VoxtralEncoder(nn.Module):
    def __init__(self, n_mels=4, d_model=8):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d_model, 3, padding=1)
        self.conv2 = nn.Conv1d(d_model, d_model, 3, stride=2, padding=1)

    def forward(self, input_features):
        x = nn.functional.gelu(self.conv1(input_features))
        x = nn.functional.gelu(self.conv2(x))
        return x.transpose(1, 2)


class VoxtralForConditionalGeneration(nn.Module):
    def __init__(self, vocab_size=16, hidden=8, audio_token_id=3):
        super().__init__()
        self.audio_token_id = audio_token_id
        self.audio_tower = VoxtralEncoder(d_model=hidden)
        self.multi_modal_projector = nn.Linear(hidden, hidden)
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def get_input_embeddings(self):
        return self.embed_tokens

    def get_audio_embeds(self, input_features):
        audio_outputs = self.audio_tower(input_features)
        audio_embeds = self.multi_modal_projector(audio_outputs)
        return audio_embeds.reshape(-1, audio_embeds.shape[-1])

    def forward(self, input_ids, input_features=None):
        inputs_embeds = self.get_input_embeddings()(input_ids)
        if input_features is not None:
            audio_embeds = self.get_audio_embeds(input_features)

            # replace text-audio token placeholders with audio embeddings
            audio_token_mask = input_ids == self.audio_token_id
            inputs_embeds[audio_token_mask] = audio_embeds  # <-- IPL003: inputs_embeds is a leaf requiring grad after the PEFT hook
        return self.lm_head(torch.tanh(inputs_embeds))


def enable_input_require_grads(model):
    def make_inputs_require_grads(module, input, output):
        output.requires_grad_(True)

    return model.get_input_embeddings().register_forward_hook(make_inputs_require_grads)


model = VoxtralForConditionalGeneration()
for p in model.embed_tokens.parameters():
    p.requires_grad_(False)
for p in model.audio_tower.parameters():
    p.requires_grad_(False)
enable_input_require_grads(model)

input_ids = torch.tensor([[1, 3, 3, 3, 5, 6]])
input_features = torch.randn(1, 4, 6)
labels = torch.tensor([[3, 3, 3, 5, 6, 7]])
logits = model(input_ids, input_features)
loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
loss.backward()
